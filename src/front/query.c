/*
 * nvidia-smi's query interface over the sample model: the field tables
 * (names, aliases, units, how each value is spelled), field-list and
 * --format parsing with suggestions for typos, and the CSV writer. Each
 * spelling rule was read off real nvidia-smi captures (R590 to R610).
 */
#include "front/query.h"

#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/err.h"
#include "core/fields.h"
#include "core/fmt.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "core/strdist.h"

/* How a field's value is found and spelled. */
enum qfmt {
	/* of the system: never take a device's error spelling */
	QF_TIMESTAMP, /* "2026/07/14 08:12:53.353", local time */
	QF_DRIVER,    /* driver version string */
	QF_COUNT,     /* number of GPUs in the snapshot */
	QF_HOSTNAME,
	/* of a device */
	QF_INDEX,
	QF_STR,          /* char array of struct gpu_device at offset arg; "" = unknown */
	QF_PCI_DOMAIN,   /* "0x0000" */
	QF_PCI_BUS,      /* "0x83" */
	QF_PCI_DEVICE,   /* "0x09" */
	QF_PCI_ID,       /* "0x233010DE" */
	QF_PCI_SUBSYS,   /* "0x16C110DE" */
	QF_INT,          /* field arg as an integer: "59", "100 %", "1980 MHz" */
	QF_MIB,          /* field arg in bytes as whole MiB, rounded down: "81559 MiB" */
	QF_WATTS,        /* field arg with two decimals: "631.95 W" */
	QF_PSTATE,       /* "P0" */
	QF_ENABLED,      /* "Enabled" / "Disabled" */
	QF_YESNO,        /* "Yes" / "No" */
	QF_COMPUTE_MODE, /* "Default", "Exclusive_Process", ... */
	QF_MASK,         /* field arg as "0x00000000000001FF" */
	QF_REASON,       /* "Active" / "Not Active": bit arg of GF_CLOCK_REASONS */
	/* of a process */
	QF_PID,
	QF_PROC_NAME, /* command path: first word of the command line */
	QF_PROC_MEM,  /* "15690 MiB" */
};

struct qfield {
	const char *name;  /* main name, shown in the header */
	const char *alias; /* another accepted name, or NULL */
	enum qfmt fmt;
	unsigned long arg; /* enum gpu_field, offset or bit, per fmt */
	const char *unit;  /* "MiB", "%", "W", "MHz" or NULL */
	const char *na;    /* spelling of an unknown value; NULL = "[N/A]" */
	const char *help;
};

/* clang-format off */
#define FIELD(name, alias, fmt, arg, unit, help) { name, alias, fmt, arg, unit, NULL, help }
/* a field whose unknown value is not spelled "[N/A]" */
#define FIELD_NA(name, fmt, arg, unit, na, help) { name, NULL, fmt, arg, unit, na, help }
#define STR(name, alias, member, help) \
	{ name, alias, QF_STR, offsetof(struct gpu_device, member), NULL, NULL, help }
/* clang-format on */

static const struct qfield gpu_fields[] = {
	FIELD("timestamp", NULL, QF_TIMESTAMP, 0, NULL,
	      "Time of the sample, local time, as \"YYYY/MM/DD HH:MM:SS.msec\"."),
	FIELD("driver_version", NULL, QF_DRIVER, 0, NULL,
	      "Version of the installed NVIDIA driver."),
	FIELD("count", NULL, QF_COUNT, 0, NULL, "Number of GPUs shown."),
	STR("name", "gpu_name", name, "Product name of the GPU."),
	STR("serial", "gpu_serial", serial, "Serial number printed on the board."),
	STR("uuid", "gpu_uuid", uuid, "Globally unique identifier of the GPU."),
	STR("pci.bus_id", "gpu_bus_id", pci_bus_id,
	    "PCI bus id as \"domain:bus:device.function\", in hex."),
	FIELD("pci.domain", NULL, QF_PCI_DOMAIN, 0, NULL, "PCI domain number, in hex."),
	FIELD("pci.bus", NULL, QF_PCI_BUS, 0, NULL, "PCI bus number, in hex."),
	FIELD("pci.device", NULL, QF_PCI_DEVICE, 0, NULL, "PCI device number, in hex."),
	FIELD("pci.device_id", NULL, QF_PCI_ID, 0, NULL, "PCI device id and vendor id, in hex."),
	FIELD("pci.sub_device_id", NULL, QF_PCI_SUBSYS, 0, NULL, "PCI subsystem id, in hex."),
	FIELD("pcie.link.gen.current", NULL, QF_INT, GF_PCIE_GEN, NULL,
	      "Current PCIe link generation (it drops when the GPU is idle)."),
	FIELD("pcie.link.gen.gpucurrent", NULL, QF_INT, GF_PCIE_GEN, NULL,
	      "Current PCIe link generation of the GPU; the same as pcie.link.gen.current."),
	FIELD("pcie.link.gen.max", NULL, QF_INT, GF_PCIE_GEN_MAX, NULL,
	      "Highest PCIe generation possible for this GPU in this system."),
	FIELD("pcie.link.gen.gpumax", NULL, QF_INT, GF_PCIE_GEN_DEV_MAX, NULL,
	      "Highest PCIe generation the GPU itself supports."),
	FIELD("pcie.link.width.current", NULL, QF_INT, GF_PCIE_WIDTH, NULL,
	      "Current PCIe link width, in lanes."),
	FIELD("pcie.link.width.max", NULL, QF_INT, GF_PCIE_WIDTH_MAX, NULL,
	      "Widest PCIe link possible for this GPU in this system, in lanes."),
	FIELD("index", NULL, QF_INDEX, 0, NULL, "Index of the GPU, from 0; may change at boot."),
	FIELD("display_mode", NULL, QF_ENABLED, GF_DISPLAY_MODE, NULL,
	      "Whether a display can be attached (\"Enabled\" or \"Disabled\"); deprecated by NVIDIA."),
	FIELD("display_active", NULL, QF_ENABLED, GF_DISPLAY_ACTIVE, NULL,
	      "Whether a display is initialised on the GPU (\"Enabled\" or \"Disabled\")."),
	FIELD("persistence_mode", NULL, QF_ENABLED, GF_PERSISTENCE, NULL,
	      "Whether the driver stays loaded with no client (\"Enabled\" or \"Disabled\")."),
	STR("vbios_version", NULL, vbios, "Version of the board's BIOS."),
	STR("inforom.img", "inforom.image", inforom, "Version of the InfoROM image."),
	FIELD("fan.speed", NULL, QF_INT, GF_FAN, "%",
	      "Intended fan speed, in percent of its maximum."),
	FIELD("pstate", NULL, QF_PSTATE, GF_PSTATE, NULL,
	      "Performance state, from P0 (fastest) to P15 (slowest)."),
	FIELD("clocks_event_reasons.supported", "clocks_throttle_reasons.supported", QF_MASK,
	      GF_CLOCK_REASONS_SUPPORTED, NULL,
	      "Bitmask of the clock event reasons this GPU can report (NVML bits)."),
	FIELD("clocks_event_reasons.active", "clocks_throttle_reasons.active", QF_MASK,
	      GF_CLOCK_REASONS, NULL, "Bitmask of the clock event reasons active now (NVML bits)."),
	FIELD("clocks_event_reasons.gpu_idle", "clocks_throttle_reasons.gpu_idle", QF_REASON,
	      CR_GPU_IDLE, NULL,
	      "Clocks are low because nothing runs on the GPU (\"Active\" or \"Not Active\")."),
	FIELD("clocks_event_reasons.applications_clocks_setting",
	      "clocks_throttle_reasons.applications_clocks_setting", QF_REASON, CR_APP_CLOCKS, NULL,
	      "Clocks are held by the applications clocks setting."),
	FIELD("clocks_event_reasons.sw_power_cap", "clocks_throttle_reasons.sw_power_cap",
	      QF_REASON, CR_SW_POWER_CAP, NULL,
	      "Clocks are lowered to keep power under the power limit."),
	FIELD("clocks_event_reasons.hw_slowdown", "clocks_throttle_reasons.hw_slowdown", QF_REASON,
	      CR_HW_SLOWDOWN, NULL,
	      "Hardware slowdown (heat or power brake) has cut clocks by half or more."),
	FIELD("clocks_event_reasons.hw_thermal_slowdown",
	      "clocks_throttle_reasons.hw_thermal_slowdown", QF_REASON, CR_HW_THERMAL, NULL,
	      "Hardware slowdown because the GPU is too hot."),
	FIELD("clocks_event_reasons.hw_power_brake_slowdown",
	      "clocks_throttle_reasons.hw_power_brake_slowdown", QF_REASON, CR_HW_POWER_BRAKE, NULL,
	      "Hardware slowdown asserted by an external power brake (the power supply)."),
	FIELD("clocks_event_reasons.sw_thermal_slowdown",
	      "clocks_throttle_reasons.sw_thermal_slowdown", QF_REASON, CR_SW_THERMAL, NULL,
	      "Clocks are lowered because the GPU is above its maximum operating temperature."),
	FIELD("clocks_event_reasons.sync_boost", "clocks_throttle_reasons.sync_boost", QF_REASON,
	      CR_SYNC_BOOST, NULL, "Clocks are held to those of the GPU's sync boost group."),
	FIELD("memory.total", NULL, QF_MIB, GF_MEM_TOTAL, "MiB",
	      "Total installed GPU memory, in MiB."),
	FIELD("memory.reserved", NULL, QF_MIB, GF_MEM_RESERVED, "MiB",
	      "Memory reserved by the driver and firmware, in MiB."),
	FIELD("memory.used", NULL, QF_MIB, GF_MEM_USED, "MiB",
	      "Memory allocated by processes (reserved memory excluded), in MiB."),
	FIELD("memory.free", NULL, QF_MIB, GF_MEM_FREE, "MiB",
	      "Memory free for allocation, in MiB."),
	FIELD("compute_mode", NULL, QF_COMPUTE_MODE, GF_COMPUTE_MODE, NULL,
	      "Who may create compute contexts: \"Default\", \"Exclusive_Thread\", \"Prohibited\" or \"Exclusive_Process\"."),
	STR("compute_cap", NULL, compute_cap, "CUDA compute capability, as major.minor."),
	FIELD("utilization.gpu", NULL, QF_INT, GF_UTIL_GPU, "%",
	      "Share of the last sample period in which a kernel ran, in percent."),
	FIELD("utilization.memory", NULL, QF_INT, GF_UTIL_MEM, "%",
	      "Share of the last sample period in which device memory was read or written, in percent."),
	FIELD("utilization.encoder", NULL, QF_INT, GF_UTIL_ENC, "%",
	      "Video encoder busy time, in percent."),
	FIELD("utilization.decoder", NULL, QF_INT, GF_UTIL_DEC, "%",
	      "Video decoder busy time, in percent."),
	FIELD("utilization.jpeg", NULL, QF_INT, GF_UTIL_JPEG, "%",
	      "JPEG decoder busy time, in percent."),
	FIELD("utilization.ofa", NULL, QF_INT, GF_UTIL_OFA, "%",
	      "Optical flow accelerator busy time, in percent."),
	FIELD("prof.graphics_active", NULL, QF_INT, GF_PROF_GR_ACTIVE, "%",
	      "GPM (Hopper and later): time the graphics/compute engine was active, in percent."),
	FIELD("prof.sm_active", NULL, QF_INT, GF_PROF_SM_ACTIVE, "%",
	      "GPM: SMs with at least one warp resident, over all SMs, in percent (utilization.gpu only says a kernel ran)."),
	FIELD("prof.sm_occupancy", NULL, QF_INT, GF_PROF_SM_OCCUPANCY, "%",
	      "GPM: resident warps as a share of the most the SMs hold, in percent."),
	FIELD("prof.tensor_active", NULL, QF_INT, GF_PROF_TENSOR_ACTIVE, "%",
	      "GPM: time the tensor pipes (any precision) were busy, in percent."),
	FIELD("prof.dram_active", NULL, QF_INT, GF_PROF_DRAM_ACTIVE, "%",
	      "GPM: DRAM bandwidth used, as a share of the peak, in percent."),
	FIELD("prof.fp64_active", NULL, QF_INT, GF_PROF_FP64_ACTIVE, "%",
	      "GPM: time the FP64 pipes were busy, in percent."),
	FIELD("prof.fp32_active", NULL, QF_INT, GF_PROF_FP32_ACTIVE, "%",
	      "GPM: time the FP32 pipes were busy, in percent."),
	FIELD("prof.fp16_active", NULL, QF_INT, GF_PROF_FP16_ACTIVE, "%",
	      "GPM: time the FP16 pipes were busy, in percent."),
	FIELD("prof.pcie.tx", NULL, QF_MIB, GF_PROF_PCIE_TX_RATE, "MiB/s",
	      "GPM: PCIe bytes sent by the GPU per second, in MiB/s."),
	FIELD("prof.pcie.rx", NULL, QF_MIB, GF_PROF_PCIE_RX_RATE, "MiB/s",
	      "GPM: PCIe bytes received by the GPU per second, in MiB/s."),
	FIELD("prof.nvlink.tx", NULL, QF_MIB, GF_PROF_NVLINK_TX_RATE, "MiB/s",
	      "GPM: NVLink bytes sent per second, all links, in MiB/s."),
	FIELD("prof.nvlink.rx", NULL, QF_MIB, GF_PROF_NVLINK_RX_RATE, "MiB/s",
	      "GPM: NVLink bytes received per second, all links, in MiB/s."),
	FIELD("encoder.stats.sessionCount", NULL, QF_INT, GF_ENC_SESSIONS, NULL,
	      "Number of active video encoder sessions."),
	FIELD("encoder.stats.averageFps", NULL, QF_INT, GF_ENC_FPS, NULL,
	      "Average frame rate of the encoder sessions."),
	FIELD("encoder.stats.averageLatency", NULL, QF_INT, GF_ENC_LATENCY, NULL,
	      "Average latency of the encoder sessions, in microseconds."),
	FIELD("ecc.mode.current", NULL, QF_ENABLED, GF_ECC_MODE, NULL,
	      "ECC mode now (\"Enabled\" or \"Disabled\")."),
	FIELD("ecc.mode.pending", NULL, QF_ENABLED, GF_ECC_MODE_PENDING, NULL,
	      "ECC mode after the next reboot."),
	FIELD("ecc.errors.corrected.volatile.total", NULL, QF_INT, GF_ECC_CORR_VOLATILE, NULL,
	      "Corrected ECC errors since the driver loaded."),
	FIELD("ecc.errors.corrected.aggregate.total", NULL, QF_INT, GF_ECC_CORR_AGGREGATE, NULL,
	      "Corrected ECC errors over the life of the GPU."),
	FIELD("ecc.errors.uncorrected.volatile.total", NULL, QF_INT, GF_ECC_UNCORR_VOLATILE, NULL,
	      "Uncorrected ECC errors since the driver loaded."),
	FIELD("ecc.errors.uncorrected.aggregate.total", NULL, QF_INT, GF_ECC_UNCORR_AGGREGATE, NULL,
	      "Uncorrected ECC errors over the life of the GPU."),
	FIELD("retired_pages.single_bit_ecc.count", "retired_pages.sbe", QF_INT, GF_RETIRED_SBE,
	      NULL, "Memory pages retired after repeated single-bit ECC errors."),
	FIELD("retired_pages.double_bit.count", "retired_pages.dbe", QF_INT, GF_RETIRED_DBE, NULL,
	      "Memory pages retired after a double-bit ECC error."),
	FIELD("retired_pages.pending", NULL, QF_YESNO, GF_RETIRED_PENDING, NULL,
	      "Whether a page waits to be retired at the next reboot (\"Yes\" or \"No\")."),
	FIELD("remapped_rows.correctable", "remapped_rows.sbe", QF_INT, GF_REMAP_CORR, NULL,
	      "Memory rows remapped after correctable errors."),
	FIELD("remapped_rows.uncorrectable", "remapped_rows.dbe", QF_INT, GF_REMAP_UNCORR, NULL,
	      "Memory rows remapped after uncorrectable errors."),
	FIELD("remapped_rows.pending", NULL, QF_YESNO, GF_REMAP_PENDING, NULL,
	      "Whether a row remap waits for a GPU reset (\"Yes\" or \"No\")."),
	FIELD("remapped_rows.failure", NULL, QF_YESNO, GF_REMAP_FAILURE, NULL,
	      "Whether a row remap has ever failed (\"Yes\" or \"No\")."),
	FIELD("temperature.gpu", NULL, QF_INT, GF_TEMP_GPU, NULL,
	      "GPU core temperature, in degrees C."),
	FIELD("temperature.gpu.tlimit", NULL, QF_INT, GF_TEMP_MARGIN, NULL,
	      "Degrees C left before the GPU slows down for heat (T.Limit)."),
	/* nvidia-smi spells this one unknown without brackets */
	FIELD_NA("temperature.memory", QF_INT, GF_TEMP_MEM, NULL, "N/A",
	         "Memory (HBM) temperature, in degrees C."),
	FIELD("power.draw", NULL, QF_WATTS, GF_POWER_DRAW, "W",
	      "Power draw of the board, in watts (a one-second average on recent GPUs)."),
	FIELD("power.draw.average", "gpu.power.draw.average", QF_WATTS, GF_POWER_AVERAGE, "W",
	      "Average power draw of the board, in watts."),
	FIELD("power.draw.instant", "gpu.power.draw.instant", QF_WATTS, GF_POWER_INSTANT, "W",
	      "Instantaneous power draw of the board, in watts."),
	FIELD("power.limit", "gpu.power.requested_limit", QF_WATTS, GF_POWER_LIMIT_SET, "W",
	      "Power limit set by software, in watts."),
	FIELD("enforced.power.limit", "gpu.power.current_limit", QF_WATTS, GF_POWER_LIMIT, "W",
	      "Power limit the GPU enforces now, in watts."),
	FIELD("power.default_limit", "gpu.power.default_limit", QF_WATTS, GF_POWER_LIMIT_DEFAULT,
	      "W", "Default power limit, in watts."),
	FIELD("power.min_limit", "gpu.power.min_limit", QF_WATTS, GF_POWER_LIMIT_MIN, "W",
	      "Lowest power limit that can be set, in watts."),
	FIELD("power.max_limit", "gpu.power.max_limit", QF_WATTS, GF_POWER_LIMIT_MAX, "W",
	      "Highest power limit that can be set, in watts."),
	FIELD("clocks.current.graphics", "clocks.gr", QF_INT, GF_CLOCK_GRAPHICS, "MHz",
	      "Graphics (shader) clock now, in MHz."),
	FIELD("clocks.current.sm", "clocks.sm", QF_INT, GF_CLOCK_SM, "MHz",
	      "SM clock now, in MHz."),
	FIELD("clocks.current.memory", "clocks.mem", QF_INT, GF_CLOCK_MEM, "MHz",
	      "Memory clock now, in MHz."),
	FIELD("clocks.current.video", "clocks.video", QF_INT, GF_CLOCK_VIDEO, "MHz",
	      "Video engine clock now, in MHz."),
	FIELD("clocks.max.graphics", "clocks.max.gr", QF_INT, GF_CLOCK_MAX_GRAPHICS, "MHz",
	      "Highest graphics clock, in MHz."),
	FIELD("clocks.max.sm", NULL, QF_INT, GF_CLOCK_MAX_SM, "MHz", "Highest SM clock, in MHz."),
	FIELD("clocks.max.memory", "clocks.max.mem", QF_INT, GF_CLOCK_MAX_MEM, "MHz",
	      "Highest memory clock, in MHz."),
	FIELD("mig.mode.current", NULL, QF_ENABLED, GF_MIG_MODE, NULL,
	      "Multi-instance GPU mode now (\"Enabled\" or \"Disabled\")."),
	FIELD("mig.mode.pending", NULL, QF_ENABLED, GF_MIG_MODE_PENDING, NULL,
	      "MIG mode after the next GPU reset."),
	FIELD("hostname", NULL, QF_HOSTNAME, 0, NULL, "Name of the host."),
};

static const struct qfield app_fields[] = {
	FIELD("timestamp", NULL, QF_TIMESTAMP, 0, NULL,
	      "Time of the sample, local time, as \"YYYY/MM/DD HH:MM:SS.msec\"."),
	STR("gpu_name", NULL, name, "Product name of the GPU the process uses."),
	STR("gpu_bus_id", NULL, pci_bus_id,
	    "PCI bus id of that GPU, as \"domain:bus:device.function\", in hex."),
	STR("gpu_serial", NULL, serial, "Serial number of that GPU's board."),
	STR("gpu_uuid", NULL, uuid, "Globally unique identifier of that GPU."),
	FIELD("pid", NULL, QF_PID, 0, NULL, "Process id."),
	FIELD("process_name", "name", QF_PROC_NAME, 0, NULL,
	      "Command the process runs (the first word of its command line)."),
	FIELD("used_gpu_memory", "used_memory", QF_PROC_MEM, 0, "MiB",
	      "GPU memory used by the process, in MiB."),
};

/* --query-gpu fields of nvidia-smi (R590 to R610) that gpuscope does not report. */
static const char *const gpu_unsupported[] = {
	"kmd_version",
	"vgpu_driver_capability.heterogenous_multivGPU",
	"pci.baseClass",
	"pci.subClass",
	"vgpu_device_capability.fractional_multiVgpu",
	"vgpu_device_capability.heterogeneous_timeSlice_profile",
	"vgpu_device_capability.heterogeneous_timeSlice_sizes",
	"vgpu_device_capability.homogeneous_placements",
	"vgpu_device_capability.mig_timeSlicing",
	"vgpu_device_capability.mig_timeSlicing_mode",
	"pcie.link.gen.hostmax",
	"display_attached",
	"addressing_mode",
	"accounting.mode",
	"accounting.buffer_size",
	"driver_model.current",
	"driver_model.pending",
	"inforom.oem",
	"inforom.ecc",
	"inforom.pwr",
	"inforom.power",
	"inforom.checksum_validation",
	"gpu_recovery_action",
	"gom.current",
	"gpu_operation_mode.current",
	"gom.pending",
	"gpu_operation_mode.pending",
	"clocks_event_reasons_counters.sw_power_cap",
	"clocks_event_reasons_counters.sync_boost",
	"clocks_event_reasons_counters.sw_thermal_slowdown",
	"clocks_event_reasons_counters.hw_thermal_slowdown",
	"clocks_event_reasons_counters.hw_power_brake_slowdown",
	"dramEncryption.mode.current",
	"dramEncryption.mode.pending",
	"ecc.errors.corrected.volatile.device_memory",
	"ecc.errors.corrected.volatile.dram",
	"ecc.errors.corrected.volatile.register_file",
	"ecc.errors.corrected.volatile.l1_cache",
	"ecc.errors.corrected.volatile.l2_cache",
	"ecc.errors.corrected.volatile.texture_memory",
	"ecc.errors.corrected.volatile.cbu",
	"ecc.errors.corrected.volatile.sram",
	"ecc.errors.corrected.aggregate.device_memory",
	"ecc.errors.corrected.aggregate.dram",
	"ecc.errors.corrected.aggregate.register_file",
	"ecc.errors.corrected.aggregate.l1_cache",
	"ecc.errors.corrected.aggregate.l2_cache",
	"ecc.errors.corrected.aggregate.texture_memory",
	"ecc.errors.corrected.aggregate.cbu",
	"ecc.errors.corrected.aggregate.sram",
	"ecc.errors.uncorrected.volatile.device_memory",
	"ecc.errors.uncorrected.volatile.dram",
	"ecc.errors.uncorrected.volatile.register_file",
	"ecc.errors.uncorrected.volatile.l1_cache",
	"ecc.errors.uncorrected.volatile.l2_cache",
	"ecc.errors.uncorrected.volatile.texture_memory",
	"ecc.errors.uncorrected.volatile.cbu",
	"ecc.errors.uncorrected.volatile.sram",
	"ecc.errors.uncorrected.aggregate.device_memory",
	"ecc.errors.uncorrected.aggregate.dram",
	"ecc.errors.uncorrected.aggregate.register_file",
	"ecc.errors.uncorrected.aggregate.l1_cache",
	"ecc.errors.uncorrected.aggregate.l2_cache",
	"ecc.errors.uncorrected.aggregate.texture_memory",
	"ecc.errors.uncorrected.aggregate.cbu",
	"ecc.errors.uncorrected.aggregate.sram",
	"ecc.errors.uncorrected.volatile.sram.parity",
	"ecc.errors.uncorrected.volatile.sram.secded",
	"ecc.errors.uncorrected.aggregate.sram.parity",
	"ecc.errors.uncorrected.aggregate.sram.secded",
	"ecc.errors.uncorrected.aggregate.sram.thresholdExceeded",
	"ecc.errors.uncorrected.aggregate.sram.l2",
	"ecc.errors.uncorrected.aggregate.sram.sm",
	"ecc.errors.uncorrected.aggregate.sram.mcu",
	"ecc.errors.uncorrected.aggregate.sram.pcie",
	"ecc.errors.uncorrected.aggregate.sram.other",
	"remapped_rows.correctable_inactive",
	"remapped_rows.uncorrectable_inactive",
	"remapped_rows.histogram.max",
	"remapped_rows.histogram.high",
	"remapped_rows.histogram.partial",
	"remapped_rows.histogram.low",
	"remapped_rows.histogram.none",
	"power.management",
	"module.power.draw.average",
	"module.power.draw.instant",
	"module.power.limit",
	"module.power.requested_limit",
	"module.enforced.power.limit",
	"module.power.current_limit",
	"module.power.default_limit",
	"module.power.min_limit",
	"module.power.max_limit",
	"edpp_multiplier",
	"clocks.applications.graphics",
	"clocks.applications.gr",
	"clocks.applications.memory",
	"clocks.applications.mem",
	"clocks.default_applications.graphics",
	"clocks.default_applications.gr",
	"clocks.default_applications.memory",
	"clocks.default_applications.mem",
	"gsp.mode.current",
	"gsp.mode.default",
	"c2c.mode",
	"protected_memory.total",
	"protected_memory.used",
	"protected_memory.free",
	"fabric.state",
	"fabric.status",
	"fabric.cliqueId",
	"fabric.clusterUuid",
	"fabric.health.summary",
	"fabric.health.bandwidth",
	"fabric.health.route_recovery_in_progress",
	"fabric.health.route_unhealthy",
	"fabric.health.access_timeout_recovery",
	"fabric.health.incorrect_configuration",
	"fabric.health.partition_assigned",
	"platform.chassis_serial_number",
	"platform.slot_number",
	"platform.tray_index",
	"platform.host_id",
	"platform.peer_type",
	"platform.module_id",
	"platform.gpu_fabric_guid",
	"gpu.base.current",
	"gpu.base.requested",
	"gpu.base.default",
	"gpu.base.min",
	"gpu.base.max",
	"power_smoothing.tmp_floor",
	"power_smoothing.tmp_ceil",
	"power_smoothing.hw_lifetime_remaining_percent",
	"power_smoothing.enabled",
	"power_smoothing.delayed_power_smoothing_supported",
	"power_smoothing.soc_power_smoothing_enabled",
	"power_smoothing.priv_level",
	"power_smoothing.imm_ramp_down",
	"power_smoothing.max_percent_tmp_floor",
	"power_smoothing.min_percent_tmp_floor",
	"power_smoothing.primary_power_floor",
	"power_smoothing.secondary_power_floor",
	"power_smoothing.min_primary_floor_activation_offset",
	"power_smoothing.min_primary_floor_activation_point",
	"power_smoothing.window_multiplier",
	"power_smoothing.num_preset_profiles",
	"power_smoothing.curr_profile.percent_tmp_floor",
	"power_smoothing.curr_profile.ramp_up_rate",
	"power_smoothing.curr_profile.ramp_down_rate",
	"power_smoothing.curr_profile.ramp_down_hysteresis",
	"power_smoothing.curr_profile.secondary_power_floor",
	"power_smoothing.curr_profile.primary_floor_act_window_multiplier",
	"power_smoothing.curr_profile.primary_floor_tar_window_multiplier",
	"power_smoothing.curr_profile.primary_floor_act_offset",
	"power_smoothing.active_profile",
	"power_smoothing.admin_override.percent_tmp_floor",
	"power_smoothing.admin_override.ramp_up_rate",
	"power_smoothing.admin_override.ramp_down_rate",
	"power_smoothing.admin_override.ramp_down_hysteresis",
	"power_smoothing.admin_override.secondary_power_floor",
	"power_smoothing.admin_override.primary_floor_act_window_multiplier",
	"power_smoothing.admin_override.primary_floor_tar_window_multiplier",
	"power_smoothing.admin_override.primary_floor_act_offset",
	"bbx.time_run",
};

static const struct qfield *
table(enum query_kind kind, size_t *nr)
{
	if (kind == QUERY_APPS) {
		*nr = ARRAY_SIZE(app_fields);
		return app_fields;
	}
	*nr = ARRAY_SIZE(gpu_fields);
	return gpu_fields;
}

static const char *
kind_option(enum query_kind kind)
{
	return kind == QUERY_APPS ? "--query-compute-apps" : "--query-gpu";
}

void
query_init(struct query *q, enum query_kind kind)
{
	memset(q, 0, sizeof(*q));
	q->kind = kind;
}

void
query_release(struct query *q)
{
	enum query_kind kind = q->kind;

	free(q->field);
	query_init(q, kind);
}

unsigned
query_field_count(enum query_kind kind)
{
	size_t nr;

	table(kind, &nr);
	return (unsigned)nr;
}

const char *
query_field_name(enum query_kind kind, unsigned id)
{
	size_t nr;
	const struct qfield *tab = table(kind, &nr);

	return id < nr ? tab[id].name : NULL;
}

const char *
query_field_unit(enum query_kind kind, unsigned id)
{
	size_t nr;
	const struct qfield *tab = table(kind, &nr);

	return id < nr ? tab[id].unit : NULL;
}

int
query_field_lookup(enum query_kind kind, const char *name)
{
	size_t nr;
	const struct qfield *tab = table(kind, &nr);

	for (size_t i = 0; i < nr; i++) {
		if (!strcasecmp(name, tab[i].name))
			return (int)i;
		if (tab[i].alias && !strcasecmp(name, tab[i].alias))
			return (int)i;
	}
	return -1;
}

static bool
is_unsupported(enum query_kind kind, const char *name)
{
	if (kind != QUERY_GPU)
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(gpu_unsupported); i++)
		if (!strcasecmp(name, gpu_unsupported[i]))
			return true;
	return false;
}

/*
 * How close a mistyped name is to candidate cand: its edit distance when
 * that is small for the name's length, or when one is a prefix of the
 * other ("memory" for "memory.used", "memory.used.mib" for "memory.used");
 * SIZE_MAX when they are not close.
 */
static size_t
closeness(const char *typed, const char *cand)
{
	size_t lt = strlen(typed), lc = strlen(cand);
	size_t d = str_distance(typed, cand);
	size_t limit = lt <= 4 ? 1 : lt <= 8 ? 2 : 3;

	if (d <= limit)
		return d;
	if (lt >= 3 && lt < lc && !strncasecmp(typed, cand, lt))
		return d;
	if (lc < lt && !strncasecmp(typed, cand, lc) && (typed[lc] == '.' || typed[lc] == '_'))
		return d;
	return SIZE_MAX;
}

/* Append " did you mean 'a', 'b' or 'c'?" for up to three close names. */
static void
suggest(enum query_kind kind, const char *typed, struct strbuf *sb)
{
	size_t nr, n = 0;
	const struct qfield *tab = table(kind, &nr);
	struct {
		const char *name;
		size_t score;
	} best[3];

	for (size_t i = 0; i < nr; i++) {
		const char *name = tab[i].name;
		size_t score = closeness(typed, name);

		/* one name per field: the closer of its main name and alias */
		if (tab[i].alias) {
			size_t s = closeness(typed, tab[i].alias);

			if (s < score) {
				score = s;
				name = tab[i].alias;
			}
		}
		if (score == SIZE_MAX)
			continue;
		/* insert by score, keeping table order among equals */
		size_t at = n;

		while (at > 0 && best[at - 1].score > score)
			at--;
		if (at >= ARRAY_SIZE(best))
			continue;
		if (n < ARRAY_SIZE(best))
			n++;
		memmove(&best[at + 1], &best[at], (n - 1 - at) * sizeof(best[0]));
		best[at].name = name;
		best[at].score = score;
	}
	if (!n) {
		strbuf_addf(sb, "; see 'gpuscope query --help-%s'", kind_option(kind) + 2);
		return;
	}
	strbuf_addstr(sb, "; did you mean ");
	for (size_t i = 0; i < n; i++) {
		if (i)
			strbuf_addstr(sb, i + 1 == n ? " or " : ", ");
		strbuf_addf(sb, "'%s'", best[i].name);
	}
	strbuf_addch(sb, '?');
}

static int
bad_field(enum query_kind kind, const char *name, struct err *err)
{
	struct strbuf sb = STRBUF_INIT;
	enum query_kind other = kind == QUERY_GPU ? QUERY_APPS : QUERY_GPU;
	int rc;

	if (is_unsupported(kind, name)) {
		strbuf_addf(
		        &sb,
		        "field '%s' is an nvidia-smi field that gpuscope does not support; see 'gpuscope query --help-%s'",
		        name, kind_option(kind) + 2);
	} else if (query_field_lookup(other, name) >= 0 || is_unsupported(other, name)) {
		strbuf_addf(&sb, "field '%s' is not valid with %s, only with %s", name,
		            kind_option(kind), kind_option(other));
	} else {
		strbuf_addf(&sb, "field '%s' is not a valid field to query", name);
		suggest(kind, name, &sb);
	}
	rc = err_set(err, E_USAGE, "%s", sb.buf);
	strbuf_release(&sb);
	return rc;
}

int
query_add_fields(struct query *q, const char *list, struct err *err)
{
	size_t nr0 = q->nr;
	const char *p = list;
	char *name = NULL;
	int rc = 0;

	while (*p) {
		size_t len = strcspn(p, ",");
		const char *s = p, *e = p + len;
		int id;

		p = *e ? e + 1 : e;
		while (s < e && isspace((unsigned char)*s))
			s++;
		while (e > s && isspace((unsigned char)e[-1]))
			e--;
		if (s == e)
			continue;
		free(name);
		name = xstrndup(s, (size_t)(e - s));
		id = query_field_lookup(q->kind, name);
		if (id < 0) {
			rc = bad_field(q->kind, name, err);
			q->nr = nr0;
			goto out;
		}
		ALLOC_GROW(q->field, q->nr + 1, q->alloc);
		q->field[q->nr++] = (unsigned)id;
	}
	if (q->nr == nr0)
		rc = err_set(err, E_USAGE, "%s needs at least one field", kind_option(q->kind));
out:
	free(name);
	return rc;
}

int
query_parse_format(struct query_format *fmt, const char *spec, struct err *err)
{
	struct query_format f = { false, false };
	bool csv = false;
	const char *p = spec;

	while (*p) {
		size_t len = strcspn(p, ",");
		const char *s = p, *e = p + len;

		p = *e ? e + 1 : e;
		while (s < e && isspace((unsigned char)*s))
			s++;
		while (e > s && isspace((unsigned char)e[-1]))
			e--;
		if (s == e)
			continue;
		if ((size_t)(e - s) == 3 && !strncasecmp(s, "csv", 3))
			csv = true;
		else if ((size_t)(e - s) == 8 && !strncasecmp(s, "noheader", 8))
			f.noheader = true;
		else if ((size_t)(e - s) == 7 && !strncasecmp(s, "nounits", 7))
			f.nounits = true;
		else
			return err_set(
			        err, E_USAGE,
			        "format option '%.*s' is not valid; use csv, noheader and nounits, as in '--format=csv,noheader'",
			        (int)(e - s), s);
	}
	if (!csv)
		return err_set(err, E_USAGE,
		               "format '%s' does not say 'csv', the only format there is", spec);
	*fmt = f;
	return 0;
}

static void
add_timestamp(double t, struct strbuf *out)
{
	long long us;
	time_t sec;
	struct tm tm;

	if (!isfinite(t) || t < 0 || t > 1e15) {
		strbuf_addstr(out, "[N/A]");
		return;
	}
	/* whole microseconds first, so that 12.696 is not 12.695999... */
	us = llround(t * 1e6);
	sec = (time_t)(us / 1000000);
	tzset(); /* localtime_r() need not look at TZ */
	if (!localtime_r(&sec, &tm)) {
		strbuf_addstr(out, "[N/A]");
		return;
	}
	strbuf_addf(out, "%04d/%02d/%02d %02d:%02d:%02d.%03d", tm.tm_year + 1900, tm.tm_mon + 1,
	            tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(us % 1000000 / 1000));
}

static const char *
compute_mode_name(int mode)
{
	switch (mode) {
	case CM_DEFAULT:
		return "Default";
	case CM_EXCLUSIVE_THREAD:
		return "Exclusive_Thread";
	case CM_PROHIBITED:
		return "Prohibited";
	case CM_EXCLUSIVE_PROCESS:
		return "Exclusive_Process";
	}
	return NULL;
}

/* Append the command path of p, through fmt_add_shown(); false if unknown. */
static bool
add_proc_name(const struct gpu_proc *p, struct strbuf *out)
{
	const char *s;
	size_t n;

	if (p->cmdline && p->cmdline[0]) {
		s = p->cmdline;
		n = strcspn(s, " ");
	} else if (p->name && p->name[0]) {
		s = p->name;
		n = strlen(s);
	} else {
		return false;
	}
	fmt_add_shown(out, s, n);
	return true;
}

/*
 * Append the value of f without its unit; false when it is unknown. d is
 * the device of the row (for a process, the device it runs on), p the
 * process or NULL.
 */
static bool
add_raw(const struct qfield *f, const struct gpu_snapshot *snap, const struct gpu_device *d,
        const struct gpu_proc *p, struct strbuf *out)
{
	double v = 0;

	switch (f->fmt) {
	case QF_INT:
	case QF_MIB:
	case QF_WATTS:
	case QF_PSTATE:
	case QF_ENABLED:
	case QF_YESNO:
	case QF_COMPUTE_MODE:
	case QF_MASK:
		if (!d || !dev_has(d, (enum gpu_field)f->arg))
			return false;
		v = d->v[f->arg];
		if (!isfinite(v))
			return false;
		break;
	default:
		break;
	}

	switch (f->fmt) {
	case QF_TIMESTAMP:
		add_timestamp(snap->time, out);
		return true;
	case QF_DRIVER:
		if (!snap->nvidia.driver_version[0])
			return false;
		fmt_add_shown(out, snap->nvidia.driver_version,
		              strlen(snap->nvidia.driver_version));
		return true;
	case QF_COUNT: {
		size_t n = 0; /* GPUs, as nvidia-smi counts them: not their MIG devices */

		for (size_t i = 0; i < snap->nr_dev; i++)
			n += !snap->dev[i].is_mig;
		strbuf_addf(out, "%zu", n);
		return true;
	}
	case QF_HOSTNAME:
		if (!snap->hostname[0])
			return false;
		fmt_add_shown(out, snap->hostname, strlen(snap->hostname));
		return true;
	case QF_INDEX:
		/* a MIG device (watch's rows): "GPU:MIG dev", as -i takes it */
		{
			char idx[24];

			strbuf_addstr(out, gpu_device_label(snap, d, idx, sizeof(idx)));
		}
		return true;
	case QF_STR: {
		const char *s = (const char *)d + f->arg;

		if (!s[0])
			return false;
		fmt_add_shown(out, s, strlen(s));
		return true;
	}
	case QF_PCI_DOMAIN:
	case QF_PCI_BUS:
	case QF_PCI_DEVICE:
		if (!d->pci_valid)
			return false;
		if (f->fmt == QF_PCI_DOMAIN)
			strbuf_addf(out, "0x%04X", d->pci_domain);
		else
			strbuf_addf(out, "0x%02X", f->fmt == QF_PCI_BUS ? d->pci_bus : d->pci_dev);
		return true;
	case QF_PCI_ID:
	case QF_PCI_SUBSYS: {
		uint32_t id = f->fmt == QF_PCI_ID ? d->pci_device_id : d->pci_subsys_id;

		if (!id)
			return false;
		strbuf_addf(out, "0x%08X", (unsigned)id);
		return true;
	}
	case QF_INT:
		strbuf_addf(out, "%lld", llround(v));
		return true;
	case QF_MIB:
		if (v < 0)
			return false;
		strbuf_addf(out, "%.0f", floor(v / 1048576.0));
		return true;
	case QF_WATTS:
		/* from whole milliwatts, as NVML gives them and nvidia-smi divides them */
		strbuf_addf(out, "%.2f", (double)llround(v * 1000.0) / 1000.0);
		return true;
	case QF_PSTATE:
		if (v < 0 || v > 15)
			return false;
		strbuf_addf(out, "P%d", (int)v);
		return true;
	case QF_ENABLED:
		strbuf_addstr(out, v != 0 ? "Enabled" : "Disabled");
		return true;
	case QF_YESNO:
		strbuf_addstr(out, v != 0 ? "Yes" : "No");
		return true;
	case QF_COMPUTE_MODE: {
		const char *s = v >= 0 && v <= 3 ? compute_mode_name((int)v) : NULL;

		if (!s)
			return false;
		strbuf_addstr(out, s);
		return true;
	}
	case QF_MASK:
		if (!(v >= 0 && v < 18446744073709551616.0))
			return false;
		strbuf_addf(out, "0x%016llX", (unsigned long long)v);
		return true;
	case QF_REASON:
		if (!dev_has(d, GF_CLOCK_REASONS) || !(d->v[GF_CLOCK_REASONS] >= 0) ||
		    d->v[GF_CLOCK_REASONS] >= 18446744073709551616.0)
			return false;
		strbuf_addstr(out, ((unsigned long long)d->v[GF_CLOCK_REASONS] & f->arg)
		                           ? "Active"
		                           : "Not Active");
		return true;
	case QF_PID:
		strbuf_addf(out, "%u", (unsigned)p->pid);
		return true;
	case QF_PROC_NAME:
		return add_proc_name(p, out);
	case QF_PROC_MEM:
		if (!proc_has(p, PF_GPU_MEM) || !isfinite(p->v[PF_GPU_MEM]) || p->v[PF_GPU_MEM] < 0)
			return false;
		strbuf_addf(out, "%.0f", floor(p->v[PF_GPU_MEM] / 1048576.0));
		return true;
	}
	return false;
}

static bool
of_system(enum qfmt fmt)
{
	return fmt == QF_TIMESTAMP || fmt == QF_DRIVER || fmt == QF_COUNT || fmt == QF_HOSTNAME;
}

static void
add_value(const struct qfield *f, const struct gpu_snapshot *snap, const struct gpu_device *d,
          const struct gpu_proc *p, bool nounits, struct strbuf *out)
{
	const char *bad = NULL;

	if (add_raw(f, snap, d, p, out)) {
		if (f->unit && !nounits)
			strbuf_addf(out, " %s", f->unit);
		return;
	}
	if (!of_system(f->fmt) && d)
		bad = dev_state_smi(d->state);
	strbuf_addstr(out, bad ? bad : f->na ? f->na : "[N/A]");
}

static bool
listed_app(const struct gpu_snapshot *snap, const struct gpu_proc *p)
{
	return (p->type & (PROC_COMPUTE | PROC_MPS)) && p->dev < snap->nr_dev;
}

void
query_value(enum query_kind kind, unsigned id, const struct gpu_snapshot *snap, size_t row,
            bool nounits, struct strbuf *out)
{
	size_t nr;
	const struct qfield *tab = table(kind, &nr);
	const struct gpu_device *d = NULL;
	const struct gpu_proc *p = NULL;

	if (id >= nr)
		BUG("query field %u of %zu", id, nr);
	if (kind == QUERY_APPS) {
		if (row >= snap->nr_proc)
			BUG("process row %zu of %zu", row, snap->nr_proc);
		p = &snap->proc[row];
		if (p->dev < snap->nr_dev)
			d = &snap->dev[p->dev];
		/* a process on a MIG device: its GPU's row, as nvidia-smi's */
		if (d)
			d = gpu_snapshot_gpu_of(snap, d);
	} else {
		if (row >= snap->nr_dev)
			BUG("device row %zu of %zu", row, snap->nr_dev);
		d = &snap->dev[row];
	}
	if (!d && !of_system(tab[id].fmt) && tab[id].fmt != QF_PID && tab[id].fmt != QF_PROC_NAME &&
	    tab[id].fmt != QF_PROC_MEM) {
		strbuf_addstr(out, "[N/A]");
		return;
	}
	add_value(&tab[id], snap, d, p, nounits, out);
}

static void
add_row(const struct query *q, const struct gpu_snapshot *snap, size_t row, struct strbuf *out)
{
	for (size_t i = 0; i < q->nr; i++) {
		if (i)
			strbuf_addstr(out, ", ");
		query_value(q->kind, q->field[i], snap, row, q->fmt.nounits, out);
	}
	strbuf_addch(out, '\n');
}

void
query_print(const struct query *q, const struct gpu_snapshot *snap, struct strbuf *out)
{
	size_t nr;
	const struct qfield *tab = table(q->kind, &nr);

	if (!q->nr)
		return;
	if (!q->fmt.noheader) {
		for (size_t i = 0; i < q->nr; i++) {
			const struct qfield *f = &tab[q->field[i]];

			if (i)
				strbuf_addstr(out, ", ");
			strbuf_addstr(out, f->name);
			if (f->unit)
				strbuf_addf(out, " [%s]", f->unit);
		}
		strbuf_addch(out, '\n');
	}
	if (q->kind == QUERY_GPU) {
		/* one row per GPU: nvidia-smi --query-gpu lists no MIG device */
		for (size_t i = 0; i < snap->nr_dev; i++)
			if (!snap->dev[i].is_mig)
				add_row(q, snap, i, out);
		return;
	}
	for (size_t i = 0; i < snap->nr_proc; i++)
		if (listed_app(snap, &snap->proc[i]))
			add_row(q, snap, i, out);
}

void
query_help(enum query_kind kind, struct strbuf *out)
{
	size_t nr;
	const struct qfield *tab = table(kind, &nr);

	strbuf_addf(out, "List of valid properties to query for the switch \"%s\":\n\n",
	            kind_option(kind));
	if (kind == QUERY_APPS)
		strbuf_addstr(out, "One line per process with a compute context on a GPU.\n\n");
	for (size_t i = 0; i < nr; i++) {
		strbuf_addf(out, "\"%s\"", tab[i].name);
		if (tab[i].alias)
			strbuf_addf(out, " or \"%s\"", tab[i].alias);
		strbuf_addf(out, "\n%s\n\n", tab[i].help);
	}
	strbuf_addf(
	        out,
	        "Give them to %s as a comma-separated list, with --format=csv[,noheader][,nounits].\n",
	        kind_option(kind));
}
