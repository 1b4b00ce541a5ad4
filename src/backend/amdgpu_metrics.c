/*
 * Parsers of amdgpu's formats: the gpu_metrics table, pp_dpm clock levels,
 * PCIe speeds, RAS counts and throttler bits. The gpu_metrics layouts are
 * declared here from the field order and types of the kernel's
 * drivers/gpu/drm/amd/include/kgd_pp_interface.h (see the note above the
 * declarations); fields are read at their offsets as little-endian
 * integers (the kernel writes host order; amdgpu's hosts are little-endian
 * in practice), never through a cast of the buffer.
 */
#include "backend/amdgpu_metrics.h"

#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/err.h"
#include "core/fields.h"
#include "core/gpu.h"
#include "core/xalloc.h"

/*
 * The layouts. The kernel compiles these structs without packing, so each
 * field sits at its natural alignment; _Alignas(8) on the 64-bit fields
 * gives the x86-64 kernel's layout on every ABI (i386 aligns uint64_t to 4
 * inside structs). Sizes are pinned below by static assertions: a table
 * whose structure_size differs from its layout is refused.
 *
 * Sources of the layout facts: kgd_pp_interface.h in torvalds/linux (v1.0
 * to v1.6 as first merged, v2.0 to v2.4, v3.0), the amd-gfx patches
 * "drm/amd/pm: Add gpu_metrics_v1_7" and "... v1_8" (and the later v1.6
 * with per-partition stats, as in a newer copy of the header), and the
 * sizes of real tables in LACT's snapshots (v1.3: 120, v2.1: 120, v3.0:
 * 264 bytes). The attribute-encoded tables that carry kernel pointers are
 * not a fixed layout and are refused as unknown.
 */
#define U64 _Alignas(8) uint64_t

struct metrics_header {
	uint16_t structure_size;
	uint8_t format_revision;
	uint8_t content_revision;
};

/* dGPU, first form: the timestamp first, 8-bit link fields */
struct metrics_v1_0 {
	struct metrics_header header;
	U64 system_clock_counter;
	uint16_t temperature_edge, temperature_hotspot, temperature_mem;
	uint16_t temperature_vrgfx, temperature_vrsoc, temperature_vrmem;
	uint16_t average_gfx_activity, average_umc_activity, average_mm_activity;
	uint16_t average_socket_power;
	uint32_t energy_accumulator;
	uint16_t average_gfxclk_frequency, average_socclk_frequency, average_uclk_frequency;
	uint16_t average_vclk0_frequency, average_dclk0_frequency;
	uint16_t average_vclk1_frequency, average_dclk1_frequency;
	uint16_t current_gfxclk, current_socclk, current_uclk, current_vclk0, current_dclk0;
	uint16_t current_vclk1, current_dclk1;
	uint32_t throttle_status;
	uint16_t current_fan_speed;
	uint8_t pcie_link_width;
	uint8_t pcie_link_speed;
};

/* v1.1 to v1.3 grow at the end of this prefix */
#define METRICS_V1_1_FIELDS                                                                  \
	struct metrics_header header;                                                        \
	uint16_t temperature_edge, temperature_hotspot, temperature_mem;                     \
	uint16_t temperature_vrgfx, temperature_vrsoc, temperature_vrmem;                    \
	uint16_t average_gfx_activity, average_umc_activity, average_mm_activity;            \
	uint16_t average_socket_power;                                                       \
	U64 energy_accumulator;                                                              \
	U64 system_clock_counter;                                                            \
	uint16_t average_gfxclk_frequency, average_socclk_frequency, average_uclk_frequency; \
	uint16_t average_vclk0_frequency, average_dclk0_frequency;                           \
	uint16_t average_vclk1_frequency, average_dclk1_frequency;                           \
	uint16_t current_gfxclk, current_socclk, current_uclk, current_vclk0, current_dclk0; \
	uint16_t current_vclk1, current_dclk1;                                               \
	uint32_t throttle_status;                                                            \
	uint16_t current_fan_speed;                                                          \
	uint16_t pcie_link_width, pcie_link_speed;                                           \
	uint16_t padding;                                                                    \
	uint32_t gfx_activity_acc, mem_activity_acc;                                         \
	uint16_t temperature_hbm[4]

struct metrics_v1_1 {
	METRICS_V1_1_FIELDS;
};

struct metrics_v1_2 {
	METRICS_V1_1_FIELDS;
	U64 firmware_timestamp;
};

struct metrics_v1_3 {
	METRICS_V1_1_FIELDS;
	U64 firmware_timestamp;
	uint16_t voltage_soc, voltage_gfx, voltage_mem;
	uint16_t padding1;
	U64 indep_throttle_status;
};

/* MI200/MI300 class: per-instance clocks, PCIe and XGMI counters */
#define METRICS_PCIE_XGMI_FIELDS                     \
	uint16_t pcie_link_width, pcie_link_speed;   \
	uint16_t xgmi_link_width, xgmi_link_speed;   \
	uint32_t gfx_activity_acc, mem_activity_acc; \
	U64 pcie_bandwidth_acc;                      \
	U64 pcie_bandwidth_inst;                     \
	U64 pcie_l0_to_recov_count_acc;              \
	U64 pcie_replay_count_acc;                   \
	U64 pcie_replay_rover_count_acc

#define METRICS_CLOCK_ARRAYS                                             \
	uint16_t current_gfxclk[8], current_socclk[4], current_vclk0[4]; \
	uint16_t current_dclk0[4], current_uclk

struct metrics_v1_4 {
	struct metrics_header header;
	uint16_t temperature_hotspot, temperature_mem, temperature_vrsoc;
	uint16_t curr_socket_power;
	uint16_t average_gfx_activity, average_umc_activity;
	uint16_t vcn_activity[4];
	U64 energy_accumulator;
	U64 system_clock_counter;
	uint32_t throttle_status;
	uint32_t gfxclk_lock_status;
	METRICS_PCIE_XGMI_FIELDS;
	U64 xgmi_read_data_acc[8];
	U64 xgmi_write_data_acc[8];
	U64 firmware_timestamp;
	METRICS_CLOCK_ARRAYS;
	uint16_t padding;
};

struct metrics_v1_5 {
	struct metrics_header header;
	uint16_t temperature_hotspot, temperature_mem, temperature_vrsoc;
	uint16_t curr_socket_power;
	uint16_t average_gfx_activity, average_umc_activity;
	uint16_t vcn_activity[4];
	uint16_t jpeg_activity[32];
	U64 energy_accumulator;
	U64 system_clock_counter;
	uint32_t throttle_status;
	uint32_t gfxclk_lock_status;
	METRICS_PCIE_XGMI_FIELDS;
	uint32_t pcie_nak_sent_count_acc, pcie_nak_rcvd_count_acc;
	U64 xgmi_read_data_acc[8];
	U64 xgmi_write_data_acc[8];
	U64 firmware_timestamp;
	METRICS_CLOCK_ARRAYS;
	uint16_t padding;
};

/* v1.6 as first merged (kernels 6.9 to 6.13): v1.5 plus throttler residencies */
struct metrics_v1_6_first {
	struct metrics_header header;
	uint16_t temperature_hotspot, temperature_mem, temperature_vrsoc;
	uint16_t curr_socket_power;
	uint16_t average_gfx_activity, average_umc_activity;
	uint16_t vcn_activity[4];
	uint16_t jpeg_activity[32];
	U64 energy_accumulator;
	U64 system_clock_counter;
	uint32_t accumulation_counter;
	uint32_t prochot_residency_acc, ppt_residency_acc, socket_thm_residency_acc;
	uint32_t vr_thm_residency_acc, hbm_thm_residency_acc;
	uint32_t throttle_status;
	uint32_t gfxclk_lock_status;
	METRICS_PCIE_XGMI_FIELDS;
	uint32_t pcie_nak_sent_count_acc, pcie_nak_rcvd_count_acc;
	U64 xgmi_read_data_acc[8];
	U64 xgmi_write_data_acc[8];
	U64 firmware_timestamp;
	METRICS_CLOCK_ARRAYS;
	uint16_t padding;
};

/* per-partition (XCP) statistics of v1.6 (later form), v1.7 and v1.8 */
struct metrics_xcp_v1_0 {
	uint32_t gfx_busy_inst[8];
	uint16_t jpeg_busy[32];
	uint16_t vcn_busy[4];
	U64 gfx_busy_acc[8];
};

struct metrics_xcp_v1_1 {
	uint32_t gfx_busy_inst[8];
	uint16_t jpeg_busy[32];
	uint16_t vcn_busy[4];
	U64 gfx_busy_acc[8];
	U64 gfx_below_host_limit_acc[8];
};

struct metrics_xcp_v1_2 {
	uint32_t gfx_busy_inst[8];
	uint16_t jpeg_busy[40];
	uint16_t vcn_busy[4];
	U64 gfx_busy_acc[8];
	U64 gfx_below_host_limit_ppt_acc[8];
	U64 gfx_below_host_limit_thm_acc[8];
	U64 gfx_low_utilization_acc[8];
	U64 gfx_below_host_limit_total_acc[8];
};

/* v1.6 as it is now: the video and JPEG use moved into the partition stats */
struct metrics_v1_6 {
	struct metrics_header header;
	uint16_t temperature_hotspot, temperature_mem, temperature_vrsoc;
	uint16_t curr_socket_power;
	uint16_t average_gfx_activity, average_umc_activity;
	U64 energy_accumulator;
	U64 system_clock_counter;
	uint32_t accumulation_counter;
	uint32_t prochot_residency_acc, ppt_residency_acc, socket_thm_residency_acc;
	uint32_t vr_thm_residency_acc, hbm_thm_residency_acc;
	uint32_t gfxclk_lock_status;
	METRICS_PCIE_XGMI_FIELDS;
	uint32_t pcie_nak_sent_count_acc, pcie_nak_rcvd_count_acc;
	U64 xgmi_read_data_acc[8];
	U64 xgmi_write_data_acc[8];
	U64 firmware_timestamp;
	METRICS_CLOCK_ARRAYS;
	uint16_t num_partition;
	struct metrics_xcp_v1_0 xcp_stats[8];
	uint32_t pcie_lc_perf_other_end_recovery;
};

/* v1.7 and v1.8 differ only in the partition stats */
#define METRICS_V1_7_FIELDS                                                          \
	struct metrics_header header;                                                \
	uint16_t temperature_hotspot, temperature_mem, temperature_vrsoc;            \
	uint16_t curr_socket_power;                                                  \
	uint16_t average_gfx_activity, average_umc_activity;                         \
	U64 mem_max_bandwidth;                                                       \
	U64 energy_accumulator;                                                      \
	U64 system_clock_counter;                                                    \
	uint32_t accumulation_counter;                                               \
	uint32_t prochot_residency_acc, ppt_residency_acc, socket_thm_residency_acc; \
	uint32_t vr_thm_residency_acc, hbm_thm_residency_acc;                        \
	uint32_t gfxclk_lock_status;                                                 \
	METRICS_PCIE_XGMI_FIELDS;                                                    \
	uint32_t pcie_nak_sent_count_acc, pcie_nak_rcvd_count_acc;                   \
	U64 xgmi_read_data_acc[8];                                                   \
	U64 xgmi_write_data_acc[8];                                                  \
	uint16_t xgmi_link_status[8];                                                \
	uint16_t padding;                                                            \
	U64 firmware_timestamp;                                                      \
	METRICS_CLOCK_ARRAYS;                                                        \
	uint16_t num_partition

struct metrics_v1_7 {
	METRICS_V1_7_FIELDS;
	struct metrics_xcp_v1_1 xcp_stats[8];
	uint32_t pcie_lc_perf_other_end_recovery;
};

struct metrics_v1_8 {
	METRICS_V1_7_FIELDS;
	struct metrics_xcp_v1_2 xcp_stats[8];
	uint32_t pcie_lc_perf_other_end_recovery;
};

/* APU, first form: the timestamp first */
struct metrics_v2_0 {
	struct metrics_header header;
	U64 system_clock_counter;
	uint16_t temperature_gfx, temperature_soc, temperature_core[8], temperature_l3[2];
	uint16_t average_gfx_activity, average_mm_activity;
	uint16_t average_socket_power, average_cpu_power, average_soc_power, average_gfx_power;
	uint16_t average_core_power[8];
	uint16_t average_gfxclk_frequency, average_socclk_frequency, average_uclk_frequency;
	uint16_t average_fclk_frequency, average_vclk_frequency, average_dclk_frequency;
	uint16_t current_gfxclk, current_socclk, current_uclk, current_fclk, current_vclk;
	uint16_t current_dclk, current_coreclk[8], current_l3clk[2];
	uint32_t throttle_status;
	uint16_t fan_pwm;
	uint16_t padding;
};

/* v2.2 to v2.4 grow at the end of this prefix */
#define METRICS_V2_1_FIELDS                                                                     \
	struct metrics_header header;                                                           \
	uint16_t temperature_gfx, temperature_soc, temperature_core[8], temperature_l3[2];      \
	uint16_t average_gfx_activity, average_mm_activity;                                     \
	U64 system_clock_counter;                                                               \
	uint16_t average_socket_power, average_cpu_power, average_soc_power, average_gfx_power; \
	uint16_t average_core_power[8];                                                         \
	uint16_t average_gfxclk_frequency, average_socclk_frequency, average_uclk_frequency;    \
	uint16_t average_fclk_frequency, average_vclk_frequency, average_dclk_frequency;        \
	uint16_t current_gfxclk, current_socclk, current_uclk, current_fclk, current_vclk;      \
	uint16_t current_dclk, current_coreclk[8], current_l3clk[2];                            \
	uint32_t throttle_status;                                                               \
	uint16_t fan_pwm;                                                                       \
	uint16_t padding[3]

struct metrics_v2_1 {
	METRICS_V2_1_FIELDS;
};

struct metrics_v2_2 {
	METRICS_V2_1_FIELDS;
	U64 indep_throttle_status;
};

#define METRICS_V2_3_FIELDS                                        \
	METRICS_V2_1_FIELDS;                                       \
	U64 indep_throttle_status;                                 \
	uint16_t average_temperature_gfx, average_temperature_soc; \
	uint16_t average_temperature_core[8], average_temperature_l3[2]

struct metrics_v2_3 {
	METRICS_V2_3_FIELDS;
};

struct metrics_v2_4 {
	METRICS_V2_3_FIELDS;
	uint16_t average_cpu_voltage, average_soc_voltage, average_gfx_voltage;
	uint16_t average_cpu_current, average_soc_current, average_gfx_current;
};

/* APU from Strix Point on: 32-bit powers, NPU (IPU) fields, residencies */
struct metrics_v3_0 {
	struct metrics_header header;
	uint16_t temperature_gfx, temperature_soc, temperature_core[16], temperature_skin;
	uint16_t average_gfx_activity, average_vcn_activity;
	uint16_t average_ipu_activity[8], average_core_c0_activity[16];
	uint16_t average_dram_reads, average_dram_writes, average_ipu_reads, average_ipu_writes;
	U64 system_clock_counter;
	uint32_t average_socket_power;
	uint16_t average_ipu_power;
	uint32_t average_apu_power, average_gfx_power, average_dgpu_power;
	uint32_t average_all_core_power;
	uint16_t average_core_power[16];
	uint16_t average_sys_power, stapm_power_limit, current_stapm_power_limit;
	uint16_t average_gfxclk_frequency, average_socclk_frequency, average_vpeclk_frequency;
	uint16_t average_ipuclk_frequency, average_fclk_frequency, average_vclk_frequency;
	uint16_t average_uclk_frequency, average_mpipu_frequency;
	uint16_t current_coreclk[16], current_core_maxfreq, current_gfx_maxfreq;
	uint32_t throttle_residency_prochot, throttle_residency_spl, throttle_residency_fppt;
	uint32_t throttle_residency_sppt, throttle_residency_thm_core;
	uint32_t throttle_residency_thm_gfx, throttle_residency_thm_soc;
	uint32_t time_filter_alphavalue;
};

/* the sizes the kernel's tables have (the real v1.3, v2.1 and v3.0 files agree) */
_Static_assert(sizeof(struct metrics_v1_0) == 80, "gpu_metrics v1.0 layout");
_Static_assert(sizeof(struct metrics_v1_1) == 96, "gpu_metrics v1.1 layout");
_Static_assert(sizeof(struct metrics_v1_2) == 104, "gpu_metrics v1.2 layout");
_Static_assert(sizeof(struct metrics_v1_3) == 120, "gpu_metrics v1.3 layout");
_Static_assert(offsetof(struct metrics_v1_3, indep_throttle_status) == 112, "v1.3 throttle");
_Static_assert(sizeof(struct metrics_v1_4) == 288, "gpu_metrics v1.4 layout");
_Static_assert(sizeof(struct metrics_v1_5) == 360, "gpu_metrics v1.5 layout");
_Static_assert(sizeof(struct metrics_v1_6_first) == 384, "gpu_metrics v1.6 (first) layout");
_Static_assert(sizeof(struct metrics_xcp_v1_0) == 168, "xcp stats v1.0 layout");
_Static_assert(sizeof(struct metrics_xcp_v1_1) == 232, "xcp stats v1.1 layout");
_Static_assert(sizeof(struct metrics_xcp_v1_2) == 440, "xcp stats v1.2 layout");
_Static_assert(sizeof(struct metrics_v1_6) == 1664, "gpu_metrics v1.6 layout");
_Static_assert(sizeof(struct metrics_v1_7) == 2208, "gpu_metrics v1.7 layout");
_Static_assert(sizeof(struct metrics_v1_8) == 3872, "gpu_metrics v1.8 layout");
_Static_assert(sizeof(struct metrics_v2_0) == 120, "gpu_metrics v2.0 layout");
_Static_assert(sizeof(struct metrics_v2_1) == 120, "gpu_metrics v2.1 layout");
_Static_assert(sizeof(struct metrics_v2_2) == 128, "gpu_metrics v2.2 layout");
_Static_assert(sizeof(struct metrics_v2_3) == 152, "gpu_metrics v2.3 layout");
_Static_assert(sizeof(struct metrics_v2_4) == 168, "gpu_metrics v2.4 layout");
_Static_assert(sizeof(struct metrics_v3_0) == 264, "gpu_metrics v3.0 layout");
_Static_assert(offsetof(struct metrics_v3_0, average_gfxclk_frequency) == 174, "v3.0 clocks");

/* indep_throttle_status is not an enum amdgpu_metric: it is kept as an integer */
#define AM_THROTTLE AM__COUNT

/* One field of a layout: where it is, how wide, and its scale to our unit. */
struct field {
	unsigned char id;    /* enum amdgpu_metric, or AM_THROTTLE */
	unsigned char width; /* bytes: 1, 2, 4 or 8 */
	unsigned char count; /* elements of an array: the largest known one counts */
	unsigned short off;
	double scale;
};

#define F(s, member, id, scale)                                                           \
	{                                                                                 \
		id, sizeof(((struct s *)0)->member), 1, offsetof(struct s, member), scale \
	}
#define FA(s, member, id, scale)                                                              \
	{                                                                                     \
		id, sizeof(((struct s *)0)->member[0]),                                       \
		        sizeof(((struct s *)0)->member) / sizeof(((struct s *)0)->member[0]), \
		        offsetof(struct s, member), scale                                     \
	}

/*
 * What each layout gives. dGPU tables (v1) are in degrees, percent, watts,
 * MHz, RPM and 0.1 GT/s. APU tables (v2, v3) are in centi-degrees; their
 * activity and power units are stated only from v2.4 on (centi-percent,
 * mW) and v3.0 (percent, mW): earlier v2 tables disagree between chips (a
 * real Phoenix v2.1 table reads 79 while gpu_busy_percent reads 0, and its
 * socket power is in mW where Raphael's is in W), so those fields are not
 * taken, nor the fan_pwm of unstated scale. throttle_status is ASIC
 * dependent and v3.0's residencies are counters, so only the ASIC
 * independent status is decoded.
 */
#define V1_COMMON(s)                                                                              \
	F(s, temperature_edge, AM_TEMP_EDGE, 1), F(s, temperature_hotspot, AM_TEMP_HOTSPOT, 1),   \
	        F(s, temperature_mem, AM_TEMP_MEM, 1),                                            \
	        F(s, average_gfx_activity, AM_GFX_ACTIVITY, 1),                                   \
	        F(s, average_umc_activity, AM_UMC_ACTIVITY, 1),                                   \
	        F(s, average_mm_activity, AM_MM_ACTIVITY, 1),                                     \
	        F(s, average_socket_power, AM_SOCKET_POWER, 1),                                   \
	        F(s, average_gfxclk_frequency, AM_GFXCLK_AVG, 1),                                 \
	        F(s, average_uclk_frequency, AM_UCLK_AVG, 1), F(s, current_gfxclk, AM_GFXCLK, 1), \
	        F(s, current_uclk, AM_UCLK, 1), F(s, current_vclk0, AM_VCLK, 1),                  \
	        F(s, current_fan_speed, AM_FAN_RPM, 1), F(s, pcie_link_width, AM_PCIE_WIDTH, 1),  \
	        F(s, pcie_link_speed, AM_PCIE_SPEED, 0.1)

static const struct field v1_0[] = { V1_COMMON(metrics_v1_0) };
static const struct field v1_1[] = { V1_COMMON(metrics_v1_1) };
static const struct field v1_2[] = { V1_COMMON(metrics_v1_2) };
static const struct field v1_3[] = {
	V1_COMMON(metrics_v1_3),
	F(metrics_v1_3, voltage_gfx, AM_VOLTAGE_GFX, 1),
	F(metrics_v1_3, voltage_soc, AM_VOLTAGE_SOC, 1),
	F(metrics_v1_3, voltage_mem, AM_VOLTAGE_MEM, 1),
	F(metrics_v1_3, indep_throttle_status, AM_THROTTLE, 1),
};

/* MI200/MI300 */
#define V1_4_COMMON(s)                                                                          \
	F(s, temperature_hotspot, AM_TEMP_HOTSPOT, 1), F(s, temperature_mem, AM_TEMP_MEM, 1),   \
	        F(s, curr_socket_power, AM_SOCKET_POWER, 1),                                    \
	        F(s, average_gfx_activity, AM_GFX_ACTIVITY, 1),                                 \
	        F(s, average_umc_activity, AM_UMC_ACTIVITY, 1),                                 \
	        F(s, pcie_link_width, AM_PCIE_WIDTH, 1),                                        \
	        F(s, pcie_link_speed, AM_PCIE_SPEED, 0.1), FA(s, current_gfxclk, AM_GFXCLK, 1), \
	        FA(s, current_vclk0, AM_VCLK, 1), F(s, current_uclk, AM_UCLK, 1)

static const struct field v1_4[] = {
	V1_4_COMMON(metrics_v1_4),
	FA(metrics_v1_4, vcn_activity, AM_MM_ACTIVITY, 1),
};
static const struct field v1_5[] = {
	V1_4_COMMON(metrics_v1_5),
	FA(metrics_v1_5, vcn_activity, AM_MM_ACTIVITY, 1),
};
static const struct field v1_6_first[] = {
	V1_4_COMMON(metrics_v1_6_first),
	FA(metrics_v1_6_first, vcn_activity, AM_MM_ACTIVITY, 1),
};
static const struct field v1_6[] = { V1_4_COMMON(metrics_v1_6) };
static const struct field v1_7[] = { V1_4_COMMON(metrics_v1_7) };
static const struct field v1_8[] = { V1_4_COMMON(metrics_v1_8) };

#define V2_COMMON(s)                                                                              \
	F(s, temperature_gfx, AM_TEMP_EDGE, 0.01),                                                \
	        F(s, average_gfxclk_frequency, AM_GFXCLK_AVG, 1),                                 \
	        F(s, average_uclk_frequency, AM_UCLK_AVG, 1), F(s, current_gfxclk, AM_GFXCLK, 1), \
	        F(s, current_uclk, AM_UCLK, 1), F(s, current_vclk, AM_VCLK, 1)

static const struct field v2_0[] = { V2_COMMON(metrics_v2_0) };
static const struct field v2_1[] = { V2_COMMON(metrics_v2_1) };
static const struct field v2_2[] = {
	V2_COMMON(metrics_v2_2),
	F(metrics_v2_2, indep_throttle_status, AM_THROTTLE, 1),
};
static const struct field v2_3[] = {
	V2_COMMON(metrics_v2_3),
	F(metrics_v2_3, indep_throttle_status, AM_THROTTLE, 1),
};
static const struct field v2_4[] = {
	V2_COMMON(metrics_v2_4),
	F(metrics_v2_4, indep_throttle_status, AM_THROTTLE, 1),
	F(metrics_v2_4, average_gfx_activity, AM_GFX_ACTIVITY, 0.01),
	F(metrics_v2_4, average_mm_activity, AM_MM_ACTIVITY, 0.01),
	F(metrics_v2_4, average_socket_power, AM_SOCKET_POWER, 0.001),
	F(metrics_v2_4, average_gfx_voltage, AM_VOLTAGE_GFX, 1),
	F(metrics_v2_4, average_soc_voltage, AM_VOLTAGE_SOC, 1),
};
static const struct field v3_0[] = {
	F(metrics_v3_0, temperature_gfx, AM_TEMP_EDGE, 0.01),
	F(metrics_v3_0, average_gfx_activity, AM_GFX_ACTIVITY, 1),
	F(metrics_v3_0, average_vcn_activity, AM_MM_ACTIVITY, 1),
	F(metrics_v3_0, average_socket_power, AM_SOCKET_POWER, 0.001),
	F(metrics_v3_0, average_gfxclk_frequency, AM_GFXCLK_AVG, 1),
	F(metrics_v3_0, average_uclk_frequency, AM_UCLK_AVG, 1),
	F(metrics_v3_0, average_vclk_frequency, AM_VCLK, 1),
};

struct layout {
	unsigned char format, content;
	unsigned short size;
	const struct field *field;
	size_t nr;
};

#define L(f, c, s, tab)                                      \
	{                                                    \
		f, c, sizeof(struct s), tab, ARRAY_SIZE(tab) \
	}

/* v1.6 has had two layouts; their sizes tell them apart */
static const struct layout layouts[] = {
	L(1, 0, metrics_v1_0, v1_0),
	L(1, 1, metrics_v1_1, v1_1),
	L(1, 2, metrics_v1_2, v1_2),
	L(1, 3, metrics_v1_3, v1_3),
	L(1, 4, metrics_v1_4, v1_4),
	L(1, 5, metrics_v1_5, v1_5),
	L(1, 6, metrics_v1_6_first, v1_6_first),
	L(1, 6, metrics_v1_6, v1_6),
	L(1, 7, metrics_v1_7, v1_7),
	L(1, 8, metrics_v1_8, v1_8),
	L(2, 0, metrics_v2_0, v2_0),
	L(2, 1, metrics_v2_1, v2_1),
	L(2, 2, metrics_v2_2, v2_2),
	L(2, 3, metrics_v2_3, v2_3),
	L(2, 4, metrics_v2_4, v2_4),
	L(3, 0, metrics_v3_0, v3_0),
};

static uint64_t
le(const unsigned char *p, unsigned width)
{
	uint64_t v = 0;

	for (unsigned i = width; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

/* The field's value in our unit, or NAN when it holds all-ones. */
static double
value(const unsigned char *b, const struct field *f)
{
	uint64_t none = f->width == 8 ? UINT64_MAX : ((uint64_t)1 << (8 * f->width)) - 1;
	double best = NAN;

	for (unsigned i = 0; i < f->count; i++) {
		uint64_t v = le(b + f->off + (size_t)i * f->width, f->width);

		if (v != none && (isnan(best) || (double)v > best))
			best = (double)v;
	}
	return best * f->scale;
}

static void
metrics_clear(struct amdgpu_metrics *m)
{
	memset(m, 0, sizeof(*m));
	for (int i = 0; i < AM__COUNT; i++)
		m->v[i] = NAN;
}

bool
amdgpu_metrics_known(unsigned format, unsigned content)
{
	for (size_t i = 0; i < ARRAY_SIZE(layouts); i++)
		if (layouts[i].format == format && layouts[i].content == content)
			return true;
	return false;
}

int
amdgpu_metrics_decode(const void *buf, size_t len, struct amdgpu_metrics *m, struct err *err)
{
	const unsigned char *b = buf;
	const struct layout *l = NULL;
	unsigned size, format, content;

	metrics_clear(m);
	if (len < sizeof(struct metrics_header))
		return err_set(err, E_PARSE, "gpu_metrics: %zu bytes, shorter than its header",
		               len);
	size = (unsigned)le(b, 2);
	format = b[2];
	content = b[3];
	if (!amdgpu_metrics_known(format, content))
		return err_set(err, E_VERSION, "gpu_metrics v%u.%u is not a layout gpuscope knows",
		               format, content);
	for (size_t i = 0; i < ARRAY_SIZE(layouts); i++)
		if (layouts[i].format == format && layouts[i].content == content &&
		    layouts[i].size == size)
			l = &layouts[i];
	if (!l)
		return err_set(err, E_PARSE,
		               "gpu_metrics v%u.%u says it has %u bytes: no layout of v%u.%u has",
		               format, content, size, format, content);
	if (size > len)
		return err_set(err, E_PARSE, "gpu_metrics v%u.%u says %u bytes, the file has %zu",
		               format, content, size, len);
	m->format = format;
	m->content = content;
	m->size = size;
	for (size_t i = 0; i < l->nr; i++) {
		const struct field *f = &l->field[i];

		if (f->id == AM_THROTTLE) {
			uint64_t v = le(b + f->off, f->width);

			m->has_throttle = v != UINT64_MAX;
			m->throttle = m->has_throttle ? v : 0;
		} else {
			m->v[f->id] = value(b, f);
		}
	}
	return 0;
}

/* One line of a pp_dpm file: "1: 456Mhz *", "S: 19Mhz *", "0: 500Mhz|" */
static bool
parse_level(const char *s, const char *end, uint32_t *mhz, bool *star)
{
	char num[16];
	size_t n = 0;
	unsigned long v;

	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if (s < end && *s == 'S')
		s++;
	else if (s < end && isdigit((unsigned char)*s))
		while (s < end && isdigit((unsigned char)*s))
			s++;
	else
		return false;
	if (s >= end || *s != ':')
		return false;
	s++;
	while (s < end && *s == ' ')
		s++;
	while (s < end && isdigit((unsigned char)*s) && n < sizeof(num) - 1)
		num[n++] = *s++;
	num[n] = '\0';
	if (!n || end - s < 3 || strncasecmp(s, "mhz", 3))
		return false;
	s += 3;
	v = strtoul(num, NULL, 10);
	if (v > UINT32_MAX)
		return false;
	*mhz = (uint32_t)v;
	*star = memchr(s, '*', (size_t)(end - s)) != NULL;
	return true;
}

unsigned
amdgpu_parse_levels(const char *text, size_t len, struct clock_levels *lv)
{
	const char *p = text, *stop;

	memset(lv, 0, sizeof(*lv));
	lv->current = -1;
	stop = memchr(text, '\0', len);
	if (!stop)
		stop = text + len;
	while (p < stop) {
		const char *eol = memchr(p, '\n', (size_t)(stop - p));
		uint32_t mhz;
		bool star;

		if (!eol)
			eol = stop;
		if (parse_level(p, eol, &mhz, &star) && lv->nr < ARRAY_SIZE(lv->mhz)) {
			if (star && lv->current < 0)
				lv->current = (int)lv->nr;
			lv->mhz[lv->nr++] = mhz;
		}
		p = eol + 1;
	}
	return lv->nr;
}

uint32_t
amdgpu_levels_max(const struct clock_levels *lv)
{
	uint32_t best = 0;

	for (unsigned i = 0; i < lv->nr && i < ARRAY_SIZE(lv->mhz); i++)
		if (lv->mhz[i] > best)
			best = lv->mhz[i];
	return best;
}

uint32_t
amdgpu_od_max(const char *text, size_t len, const char *section)
{
	const char *p = text, *stop = memchr(text, '\0', len), *from = NULL;
	size_t slen = strlen(section);
	struct clock_levels lv;

	if (!stop)
		stop = text + len;
	/* the section runs from its "OD_SCLK:" line to the next "NAME:" line */
	while (p < stop) {
		const char *eol = memchr(p, '\n', (size_t)(stop - p)), *q = p, *e;

		if (!eol)
			eol = stop;
		/* Phoenix pads its lines with spaces */
		e = eol;
		while (q < e && (*q == ' ' || *q == '\t'))
			q++;
		while (e > q && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		if (from && e > q && e[-1] == ':' && isupper((unsigned char)*q))
			break;
		if (!from && (size_t)(e - q) == slen + 1 && !strncmp(q, section, slen) &&
		    q[slen] == ':')
			from = eol;
		p = eol < stop ? eol + 1 : stop;
	}
	if (!from || p <= from)
		return 0;
	amdgpu_parse_levels(from, (size_t)(p - from), &lv);
	return amdgpu_levels_max(&lv);
}

/* The number after "<key>:" in text, as in "ue: 0\nce: 3" */
static bool
ras_count(const char *text, const char *key, uint64_t *v)
{
	size_t klen = strlen(key);

	for (const char *p = text; p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		char *end;

		while (*p == ' ')
			p++;
		if (strncmp(p, key, klen) || p[klen] != ':')
			continue;
		p += klen + 1;
		*v = strtoull(p, &end, 10);
		return end != p;
	}
	return false;
}

int
amdgpu_parse_ras(const char *text, uint64_t *ue, uint64_t *ce)
{
	return ras_count(text, "ue", ue) && ras_count(text, "ce", ce) ? 0 : E_PARSE;
}

/* SMU_THROTTLER_* bits of amdgpu_smu.h, with what each means here */
static const struct throttler {
	unsigned char bit;
	const char *name;
	unsigned reason;
} throttlers[] = {
	{ 0, "PPT0", CR_SW_POWER_CAP },
	{ 1, "PPT1", CR_SW_POWER_CAP },
	{ 2, "PPT2", CR_SW_POWER_CAP },
	{ 3, "PPT3", CR_SW_POWER_CAP },
	{ 4, "SPL", CR_SW_POWER_CAP },
	{ 5, "FPPT", CR_SW_POWER_CAP },
	{ 6, "SPPT", CR_SW_POWER_CAP },
	{ 7, "SPPT_APU", CR_SW_POWER_CAP },
	/* current (TDC) and di/dt (EDC) limits hold power down as a limit does */
	{ 16, "TDC_GFX", CR_SW_POWER_CAP },
	{ 17, "TDC_SOC", CR_SW_POWER_CAP },
	{ 18, "TDC_MEM", CR_SW_POWER_CAP },
	{ 19, "TDC_VDD", CR_SW_POWER_CAP },
	{ 20, "TDC_CVIP", CR_SW_POWER_CAP },
	{ 21, "EDC_CPU", CR_SW_POWER_CAP },
	{ 22, "EDC_GFX", CR_SW_POWER_CAP },
	{ 23, "APCC", CR_SW_POWER_CAP },
	{ 32, "TEMP_GPU", CR_SW_THERMAL },
	{ 33, "TEMP_CORE", CR_SW_THERMAL },
	{ 34, "TEMP_MEM", CR_SW_THERMAL },
	{ 35, "TEMP_EDGE", CR_SW_THERMAL },
	{ 36, "TEMP_HOTSPOT", CR_SW_THERMAL },
	{ 37, "TEMP_SOC", CR_SW_THERMAL },
	{ 38, "TEMP_VR_GFX", CR_SW_THERMAL },
	{ 39, "TEMP_VR_SOC", CR_SW_THERMAL },
	{ 40, "TEMP_VR_MEM0", CR_SW_THERMAL },
	{ 41, "TEMP_VR_MEM1", CR_SW_THERMAL },
	{ 42, "TEMP_LIQUID0", CR_SW_THERMAL },
	{ 43, "TEMP_LIQUID1", CR_SW_THERMAL },
	/* signals from outside the GPU's own control loop */
	{ 44, "VRHOT0", CR_HW_SLOWDOWN },
	{ 45, "VRHOT1", CR_HW_SLOWDOWN },
	{ 46, "PROCHOT_CPU", CR_HW_SLOWDOWN },
	{ 47, "PROCHOT_GFX", CR_HW_SLOWDOWN },
	{ 56, "PPM", CR_SW_POWER_CAP },
	/* a reliability (lifetime) limit: NVML has no reason for it, the name says it */
	{ 57, "FIT", 0 },
};

unsigned
amdgpu_throttle_reasons(uint64_t s, char *names, size_t size)
{
	unsigned reasons = 0;
	size_t len = 0;
	bool full = false;

	if (size)
		names[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(throttlers); i++) {
		const struct throttler *t = &throttlers[i];
		size_t need;

		if (!(s >> t->bit & 1))
			continue;
		reasons |= t->reason;
		need = strlen(t->name) + (len ? 2 : 0);
		if (full || len + need >= size) {
			full = true;
			continue;
		}
		snprintf(names + len, size - len, "%s%s", len ? ", " : "", t->name);
		len += need;
	}
	return reasons;
}

unsigned
amdgpu_throttle_supported(void)
{
	return CR_SW_POWER_CAP | CR_SW_THERMAL | CR_HW_SLOWDOWN;
}
