/*
 * The numeric fields of the device sample model, and what each means.
 *
 * Every front end (table, JSON, nvidia-smi query, later top, Prometheus and
 * doctor) reads devices through these ids and this one table, so a field is
 * named, typed and documented once. A value is a double in the unit its key
 * names; whether it could be read is a separate validity bit (fields.h
 * never uses 0 or -1 to mean "unknown").
 */
#ifndef GPUSCOPE_FIELDS_H
#define GPUSCOPE_FIELDS_H

#include <stdbool.h>
#include <stdint.h>

enum gpu_field {
	/* memory, bytes */
	GF_MEM_TOTAL,
	GF_MEM_RESERVED,
	GF_MEM_USED, /* excludes driver-reserved memory */
	GF_MEM_FREE,
	GF_BAR1_TOTAL,
	GF_BAR1_USED,
	GF_MEM_VISIBLE_TOTAL, /* VRAM the CPU can map (AMD: without resizable BAR, 256 MiB) */
	GF_MEM_VISIBLE_USED,
	GF_GTT_TOTAL, /* system memory the GPU may map (AMD GTT) */
	GF_GTT_USED,
	/* utilisation, percent */
	GF_UTIL_GPU,
	GF_UTIL_MEM,
	GF_UTIL_ENC,
	GF_UTIL_DEC,
	GF_UTIL_JPEG,
	GF_UTIL_OFA,
	/* temperatures, degrees Celsius */
	GF_TEMP_GPU,
	GF_TEMP_MEM,
	GF_TEMP_HOTSPOT, /* hottest point of the die (AMD junction) */
	GF_TEMP_MARGIN,  /* degrees left before slowdown (nvidia-smi "T.Limit") */
	GF_TEMP_SLOWDOWN,
	GF_TEMP_SHUTDOWN,
	GF_TEMP_GPU_MAX,
	GF_TEMP_MEM_MAX,
	GF_FAN, /* percent of maximum */
	GF_FAN_RPM,
	/* power, watts; energy, joules */
	GF_POWER_DRAW,      /* averaged over about 1 s on recent GPUs */
	GF_POWER_INSTANT,   /* instantaneous */
	GF_POWER_AVERAGE,   /* averaged by the GPU over about one second */
	GF_POWER_LIMIT,     /* enforced limit */
	GF_POWER_LIMIT_SET, /* power management limit set by software */
	GF_POWER_LIMIT_DEFAULT,
	GF_POWER_LIMIT_MIN,
	GF_POWER_LIMIT_MAX,
	GF_ENERGY, /* since the driver loaded */
	/* clocks, MHz */
	GF_CLOCK_GRAPHICS,
	GF_CLOCK_GRAPHICS_REQ, /* what the driver asked for (Intel cur_freq) */
	GF_CLOCK_SM,
	GF_CLOCK_MEM,
	GF_CLOCK_VIDEO,
	GF_CLOCK_MAX_GRAPHICS,
	GF_CLOCK_MAX_SM,
	GF_CLOCK_MAX_MEM,
	GF_CLOCK_MAX_VIDEO,
	GF_PSTATE,                  /* 0 (P0, fastest) .. 15 */
	GF_CLOCK_REASONS,           /* bitmask, enum clock_reason */
	GF_CLOCK_REASONS_SUPPORTED, /* bitmask */
	/* PCIe */
	GF_PCIE_GEN,
	GF_PCIE_GEN_MAX,     /* max of this device in this system */
	GF_PCIE_GEN_DEV_MAX, /* max the device itself supports */
	GF_PCIE_WIDTH,
	GF_PCIE_WIDTH_MAX,
	GF_PCIE_REPLAY, /* replay counter since reset */
	/* modes */
	GF_PERSISTENCE,  /* bool */
	GF_COMPUTE_MODE, /* enum compute_mode */
	GF_MIG_MODE,     /* bool, current */
	GF_MIG_MODE_PENDING,
	GF_DISPLAY_MODE,   /* bool: a display can be attached */
	GF_DISPLAY_ACTIVE, /* bool */
	GF_ECC_MODE,       /* bool, current */
	GF_ECC_MODE_PENDING,
	/* reliability, counts */
	GF_ECC_CORR_VOLATILE,
	GF_ECC_UNCORR_VOLATILE,
	GF_ECC_CORR_AGGREGATE,
	GF_ECC_UNCORR_AGGREGATE,
	GF_RETIRED_SBE,     /* pages retired for multiple single-bit errors */
	GF_RETIRED_DBE,     /* pages retired for double-bit errors */
	GF_RETIRED_PENDING, /* bool */
	GF_REMAP_CORR,
	GF_REMAP_UNCORR,
	GF_REMAP_PENDING, /* bool */
	GF_REMAP_FAILURE, /* bool */
	/* video encoder */
	GF_ENC_SESSIONS,
	GF_ENC_FPS,
	GF_ENC_LATENCY, /* microseconds */
	/* AMD RAS, all blocks */
	GF_RAS_CORR,
	GF_RAS_UNCORR,
	GF_VOLTAGE_GFX, /* millivolts */
	/* PCIe throughput, bytes per second (NVML samples it over 20 ms) */
	GF_PCIE_TX_RATE,
	GF_PCIE_RX_RATE,
	/*
	 * Time clocks were held below their target, seconds since the driver
	 * loaded (NVML violation counters, nvmlDeviceGetViolationStatus)
	 */
	GF_VIOL_POWER,
	GF_VIOL_THERMAL,
	GF_VIOL_SYNC_BOOST,
	GF_VIOL_BOARD_LIMIT,
	GF_VIOL_LOW_UTIL,
	GF_VIOL_RELIABILITY,
	GF_VIOL_APP_CLOCKS,
	GF_VIOL_BASE_CLOCKS,
	/* NVLink, all links of the GPU together (per link: gpu_device.nvlink[]) */
	GF_NVLINK_LINKS_ACTIVE,
	GF_NVLINK_TX_BYTES, /* counters, bytes of data */
	GF_NVLINK_RX_BYTES,
	GF_NVLINK_CRC_FLIT, /* error counters */
	GF_NVLINK_CRC_DATA,
	GF_NVLINK_REPLAY,
	GF_NVLINK_RECOVERY,
	/*
	 * Profiling metrics (NVML GPM on Hopper and later; DCGM_FI_PROF_*),
	 * percent of the sample period, averaged over all SMs where it says so
	 */
	GF_PROF_GR_ACTIVE,     /* the graphics/compute engine was active */
	GF_PROF_SM_ACTIVE,     /* SMs with at least one warp resident */
	GF_PROF_SM_OCCUPANCY,  /* resident warps as a share of the maximum */
	GF_PROF_TENSOR_ACTIVE, /* any tensor pipe busy */
	GF_PROF_DRAM_ACTIVE,   /* memory bandwidth used, share of the peak */
	GF_PROF_FP64_ACTIVE,
	GF_PROF_FP32_ACTIVE,
	GF_PROF_FP16_ACTIVE,
	GF_PROF_PCIE_TX_RATE, /* bytes per second */
	GF_PROF_PCIE_RX_RATE,
	GF_PROF_NVLINK_TX_RATE, /* bytes per second, all links */
	GF_PROF_NVLINK_RX_RATE,
	GF__COUNT
};

enum field_kind {
	FK_GAUGE,   /* a value now */
	FK_COUNTER, /* grows; rate or delta is what matters */
	FK_BOOL,    /* 0 or 1 */
	FK_ENUM,    /* small integer with names */
	FK_BITMASK, /* set of flags with names */
	FK_STATIC,  /* a property of the device: limits, maxima, totals */
};

/* compute mode values (GF_COMPUTE_MODE); same numbers as NVML */
enum compute_mode {
	CM_DEFAULT = 0,
	CM_EXCLUSIVE_THREAD = 1,
	CM_PROHIBITED = 2,
	CM_EXCLUSIVE_PROCESS = 3,
};

/* clock event reasons (GF_CLOCK_REASONS); same bits as NVML */
enum clock_reason {
	CR_GPU_IDLE = 1 << 0,
	CR_APP_CLOCKS = 1 << 1,
	CR_SW_POWER_CAP = 1 << 2,
	CR_HW_SLOWDOWN = 1 << 3,
	CR_SYNC_BOOST = 1 << 4,
	CR_SW_THERMAL = 1 << 5,
	CR_HW_THERMAL = 1 << 6,
	CR_HW_POWER_BRAKE = 1 << 7,
	CR_DISPLAY_CLOCKS = 1 << 8,
	CR_BOARD_LIMIT = 1 << 9,  /* NVML 13 */
	CR_RELIABILITY = 1 << 10, /* NVML 13 */
};

struct field_info {
	const char *key; /* JSON key, unit in the name: "memory_used_bytes" */
	enum field_kind kind;
	unsigned char decimals; /* digits after the point worth printing */
	const char *help;       /* one line: what it is */
};

/* Metadata of field f; f must be a valid enum gpu_field. */
const struct field_info *field_info(enum gpu_field f);
/* Find a field by JSON key; returns -1 if none. */
int field_by_key(const char *key);

/* One named flag of a bitmask field. */
struct flag_name {
	uint64_t bit;
	const char *key;   /* "sw_power_cap" */
	const char *label; /* "SW power cap" */
	const char *help;
};
/* The clock event reasons with their names, in bit order; *nr receives the count. */
const struct flag_name *clock_reason_names(unsigned *nr);
/* Name of a compute mode ("default", ...), or NULL if out of range. */
const char *compute_mode_key(double mode);

#endif
