/*
 * The field table: key, kind and meaning of every numeric device field.
 */
#include "core/fields.h"

#include <string.h>

#include "core/xalloc.h"

static const struct field_info fields[GF__COUNT] = {
	[GF_MEM_TOTAL] = { "memory_total_bytes", FK_STATIC, 0, "total installed GPU memory" },
	[GF_MEM_RESERVED] = { "memory_reserved_bytes", FK_GAUGE, 0,
	                      "memory reserved by the driver and firmware" },
	[GF_MEM_USED] = { "memory_used_bytes", FK_GAUGE, 0,
	                  "memory allocated by processes (excludes reserved)" },
	[GF_MEM_FREE] = { "memory_free_bytes", FK_GAUGE, 0, "memory available for allocation" },
	[GF_BAR1_TOTAL] = { "bar1_total_bytes", FK_STATIC, 0, "size of the BAR1 aperture" },
	[GF_BAR1_USED] = { "bar1_used_bytes", FK_GAUGE, 0, "BAR1 aperture in use" },
	[GF_MEM_VISIBLE_TOTAL] = { "memory_visible_total_bytes", FK_STATIC, 0,
	                           "device memory the CPU can map directly (resizable BAR)" },
	[GF_MEM_VISIBLE_USED] = { "memory_visible_used_bytes", FK_GAUGE, 0,
	                          "CPU-visible device memory in use" },
	[GF_GTT_TOTAL] = { "gtt_total_bytes", FK_STATIC, 0, "system memory the GPU may map (GTT)" },
	[GF_GTT_USED] = { "gtt_used_bytes", FK_GAUGE, 0, "system memory mapped for the GPU now" },
	[GF_UTIL_GPU] = { "utilization_gpu_percent", FK_GAUGE, 0,
	                  "share of the last sample period in which a kernel ran" },
	[GF_UTIL_MEM] = { "utilization_memory_percent", FK_GAUGE, 0,
	                  "share of the last sample period in which memory was read or written" },
	[GF_UTIL_ENC] = { "utilization_encoder_percent", FK_GAUGE, 0, "video encoder busy" },
	[GF_UTIL_DEC] = { "utilization_decoder_percent", FK_GAUGE, 0, "video decoder busy" },
	[GF_UTIL_JPEG] = { "utilization_jpeg_percent", FK_GAUGE, 0, "JPEG decoder busy" },
	[GF_UTIL_OFA] = { "utilization_ofa_percent", FK_GAUGE, 0, "optical flow accelerator busy" },
	[GF_TEMP_GPU] = { "temperature_gpu_celsius", FK_GAUGE, 0, "GPU core temperature" },
	[GF_TEMP_MEM] = { "temperature_memory_celsius", FK_GAUGE, 0, "memory (HBM) temperature" },
	[GF_TEMP_HOTSPOT] = { "temperature_hotspot_celsius", FK_GAUGE, 0,
	                      "hottest point of the die (junction)" },
	[GF_TEMP_MARGIN] = { "temperature_margin_celsius", FK_GAUGE, 0,
	                     "degrees left before the GPU slows down for heat" },
	[GF_TEMP_SLOWDOWN] = { "temperature_slowdown_celsius", FK_STATIC, 0,
	                       "temperature at which clocks are slowed" },
	[GF_TEMP_SHUTDOWN] = { "temperature_shutdown_celsius", FK_STATIC, 0,
	                       "temperature at which the GPU shuts down" },
	[GF_TEMP_GPU_MAX] = { "temperature_gpu_max_celsius", FK_STATIC, 0,
	                      "maximum operating GPU temperature" },
	[GF_TEMP_MEM_MAX] = { "temperature_memory_max_celsius", FK_STATIC, 0,
	                      "maximum operating memory temperature" },
	[GF_FAN] = { "fan_speed_percent", FK_GAUGE, 0, "fan speed as a share of its maximum" },
	[GF_FAN_RPM] = { "fan_speed_rpm", FK_GAUGE, 0, "fan speed in revolutions per minute" },
	[GF_POWER_DRAW] = { "power_draw_watts", FK_GAUGE, 2,
	                    "power draw (averaged over about one second on recent GPUs)" },
	[GF_POWER_INSTANT] = { "power_draw_instant_watts", FK_GAUGE, 2,
	                       "instantaneous power draw" },
	[GF_POWER_AVERAGE] = { "power_draw_average_watts", FK_GAUGE, 2,
	                       "power draw averaged by the GPU over about one second" },
	[GF_POWER_LIMIT] = { "power_limit_watts", FK_GAUGE, 2, "power limit the GPU enforces now" },
	[GF_POWER_LIMIT_SET] = { "power_management_limit_watts", FK_GAUGE, 2,
	                         "power limit set by software" },
	[GF_POWER_LIMIT_DEFAULT] = { "power_default_limit_watts", FK_STATIC, 2,
	                             "default power limit" },
	[GF_POWER_LIMIT_MIN] = { "power_min_limit_watts", FK_STATIC, 2,
	                         "lowest power limit that can be set" },
	[GF_POWER_LIMIT_MAX] = { "power_max_limit_watts", FK_STATIC, 2,
	                         "highest power limit that can be set" },
	[GF_ENERGY] = { "energy_consumed_joules", FK_COUNTER, 3,
	                "energy used since the driver was loaded" },
	[GF_CLOCK_GRAPHICS] = { "clock_graphics_mhz", FK_GAUGE, 0, "graphics clock" },
	[GF_CLOCK_GRAPHICS_REQ] = { "clock_graphics_requested_mhz", FK_GAUGE, 0,
	                            "graphics clock the driver asked for" },
	[GF_CLOCK_SM] = { "clock_sm_mhz", FK_GAUGE, 0, "streaming multiprocessor clock" },
	[GF_CLOCK_MEM] = { "clock_memory_mhz", FK_GAUGE, 0, "memory clock" },
	[GF_CLOCK_VIDEO] = { "clock_video_mhz", FK_GAUGE, 0, "video engine clock" },
	[GF_CLOCK_MAX_GRAPHICS] = { "clock_graphics_max_mhz", FK_STATIC, 0,
	                            "maximum graphics clock" },
	[GF_CLOCK_MAX_SM] = { "clock_sm_max_mhz", FK_STATIC, 0, "maximum SM clock" },
	[GF_CLOCK_MAX_MEM] = { "clock_memory_max_mhz", FK_STATIC, 0, "maximum memory clock" },
	[GF_CLOCK_MAX_VIDEO] = { "clock_video_max_mhz", FK_STATIC, 0, "maximum video clock" },
	[GF_PSTATE] = { "performance_state", FK_ENUM, 0,
	                "performance state, 0 (P0) is the fastest" },
	[GF_CLOCK_REASONS] = { "clock_event_reasons", FK_BITMASK, 0,
	                       "why clocks are below their maximum now" },
	[GF_CLOCK_REASONS_SUPPORTED] = { "clock_event_reasons_supported", FK_BITMASK, 0,
	                                 "reasons this GPU can report" },
	[GF_PCIE_GEN] = { "pcie_link_gen", FK_GAUGE, 0,
	                  "current PCIe link generation (drops when idle to save power)" },
	[GF_PCIE_GEN_MAX] = { "pcie_link_gen_max", FK_STATIC, 0,
	                      "highest PCIe generation of this GPU in this system" },
	[GF_PCIE_GEN_DEV_MAX] = { "pcie_link_gen_device_max", FK_STATIC, 0,
	                          "highest PCIe generation the GPU supports" },
	[GF_PCIE_WIDTH] = { "pcie_link_width", FK_GAUGE, 0, "current PCIe link width (lanes)" },
	[GF_PCIE_WIDTH_MAX] = { "pcie_link_width_max", FK_STATIC, 0, "widest PCIe link possible" },
	[GF_PCIE_REPLAY] = { "pcie_replay_count", FK_COUNTER, 0,
	                     "PCIe packets replayed since reset (link errors)" },
	[GF_PERSISTENCE] = { "persistence_mode", FK_BOOL, 0,
	                     "driver stays initialised with no client" },
	[GF_COMPUTE_MODE] = { "compute_mode", FK_ENUM, 0, "who may create CUDA contexts" },
	[GF_MIG_MODE] = { "mig_mode", FK_BOOL, 0, "multi-instance GPU mode is on" },
	[GF_MIG_MODE_PENDING] = { "mig_mode_pending", FK_BOOL, 0, "MIG mode after the next reset" },
	[GF_DISPLAY_MODE] = { "display_mode", FK_BOOL, 0, "a display can be attached" },
	[GF_DISPLAY_ACTIVE] = { "display_active", FK_BOOL, 0,
	                        "a display is initialised on the GPU" },
	[GF_ECC_MODE] = { "ecc_mode", FK_BOOL, 0, "ECC is on" },
	[GF_ECC_MODE_PENDING] = { "ecc_mode_pending", FK_BOOL, 0,
	                          "ECC mode after the next reboot" },
	[GF_ECC_CORR_VOLATILE] = { "ecc_corrected_volatile", FK_COUNTER, 0,
	                           "corrected ECC errors since the driver loaded" },
	[GF_ECC_UNCORR_VOLATILE] = { "ecc_uncorrected_volatile", FK_COUNTER, 0,
	                             "uncorrected ECC errors since the driver loaded" },
	[GF_ECC_CORR_AGGREGATE] = { "ecc_corrected_aggregate", FK_COUNTER, 0,
	                            "corrected ECC errors over the GPU's life" },
	[GF_ECC_UNCORR_AGGREGATE] = { "ecc_uncorrected_aggregate", FK_COUNTER, 0,
	                              "uncorrected ECC errors over the GPU's life" },
	[GF_RETIRED_SBE] = { "retired_pages_single_bit", FK_COUNTER, 0,
	                     "pages retired after repeated single-bit errors" },
	[GF_RETIRED_DBE] = { "retired_pages_double_bit", FK_COUNTER, 0,
	                     "pages retired after a double-bit error" },
	[GF_RETIRED_PENDING] = { "retired_pages_pending", FK_BOOL, 0,
	                         "a page waits to be retired at the next reboot" },
	[GF_REMAP_CORR] = { "remapped_rows_correctable", FK_COUNTER, 0,
	                    "memory rows remapped after correctable errors" },
	[GF_REMAP_UNCORR] = { "remapped_rows_uncorrectable", FK_COUNTER, 0,
	                      "memory rows remapped after uncorrectable errors" },
	[GF_REMAP_PENDING] = { "remapped_rows_pending", FK_BOOL, 0,
	                       "a row remap waits for a GPU reset" },
	[GF_REMAP_FAILURE] = { "remapped_rows_failure", FK_BOOL, 0,
	                       "a row remap failed (the GPU needs service)" },
	[GF_ENC_SESSIONS] = { "encoder_sessions", FK_GAUGE, 0, "active video encoder sessions" },
	[GF_ENC_FPS] = { "encoder_average_fps", FK_GAUGE, 0, "average encoder frame rate" },
	[GF_ENC_LATENCY] = { "encoder_average_latency_us", FK_GAUGE, 0, "average encoder latency" },
	[GF_RAS_CORR] = { "ras_errors_corrected", FK_COUNTER, 0,
	                  "corrected errors reported by RAS, all blocks" },
	[GF_RAS_UNCORR] = { "ras_errors_uncorrected", FK_COUNTER, 0,
	                    "uncorrected errors reported by RAS, all blocks" },
	[GF_VOLTAGE_GFX] = { "voltage_graphics_mv", FK_GAUGE, 0, "graphics core voltage" },
};

const struct field_info *
field_info(enum gpu_field f)
{
	if ((unsigned)f >= GF__COUNT || !fields[f].key)
		BUG("no field %d", (int)f);
	return &fields[f];
}

int
field_by_key(const char *key)
{
	for (int i = 0; i < GF__COUNT; i++)
		if (fields[i].key && !strcmp(fields[i].key, key))
			return i;
	return -1;
}

static const struct flag_name clock_reasons[] = {
	{ CR_GPU_IDLE, "gpu_idle", "idle",
	  "nothing is running, clocks drop to save power (normal)" },
	{ CR_APP_CLOCKS, "applications_clocks_setting", "app clocks",
	  "clocks are held by an applications-clocks or locked-clocks setting" },
	{ CR_SW_POWER_CAP, "sw_power_cap", "SW power cap",
	  "clocks are lowered to stay under the power limit" },
	{ CR_HW_SLOWDOWN, "hw_slowdown", "HW slowdown",
	  "hardware slowdown: too hot, or the power supply asked for less power" },
	{ CR_SYNC_BOOST, "sync_boost", "sync boost",
	  "clocks are held to match other GPUs of a sync-boost group" },
	{ CR_SW_THERMAL, "sw_thermal_slowdown", "SW thermal",
	  "clocks are lowered by the driver to keep the GPU or memory cool" },
	{ CR_HW_THERMAL, "hw_thermal_slowdown", "HW thermal",
	  "hardware thermal slowdown: the GPU is too hot" },
	{ CR_HW_POWER_BRAKE, "hw_power_brake_slowdown", "power brake",
	  "the power brake signal from the system slowed the GPU" },
	{ CR_DISPLAY_CLOCKS, "display_clock_setting", "display clocks",
	  "clocks are held by the display configuration" },
};

const struct flag_name *
clock_reason_names(unsigned *nr)
{
	*nr = ARRAY_SIZE(clock_reasons);
	return clock_reasons;
}

const char *
compute_mode_key(double mode)
{
	static const char *const names[] = { "default", "exclusive_thread", "prohibited",
		                             "exclusive_process" };

	/* also false for NaN */
	if (!(mode >= 0 && mode < (double)ARRAY_SIZE(names)))
		return NULL;
	return names[(size_t)mode];
}
