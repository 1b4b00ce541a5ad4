/*
 * amdgpu's own file formats, parsed from bytes already read: the binary
 * gpu_metrics table (every layout the kernel defines whose size is known),
 * the clock level lists of pp_dpm_sclk and pp_dpm_mclk, PCIe link speeds,
 * RAS error counts, and the SMU's ASIC-independent throttler bits. Nothing
 * here opens a file, so each parser can be tested on strings (drm_amdgpu.c
 * reads the files and maps the results onto the sample model).
 */
#ifndef GPUSCOPE_AMDGPU_METRICS_H
#define GPUSCOPE_AMDGPU_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct err;
struct clock_levels;

/* What a gpu_metrics table can tell, in the units of the sample model. */
enum amdgpu_metric {
	AM_TEMP_EDGE,    /* degrees Celsius (APU: the graphics block's temperature) */
	AM_TEMP_HOTSPOT, /* junction */
	AM_TEMP_MEM,
	AM_GFX_ACTIVITY, /* percent */
	AM_UMC_ACTIVITY, /* memory controller, percent */
	AM_MM_ACTIVITY,  /* video engine (UVD or VCN; busiest instance), percent */
	AM_SOCKET_POWER, /* watts */
	AM_GFXCLK,       /* current graphics clock, MHz (busiest XCC on multi-die parts) */
	AM_GFXCLK_AVG,   /* averaged by the firmware, MHz */
	AM_UCLK,         /* current memory clock, MHz */
	AM_UCLK_AVG,
	AM_VCLK, /* video clock, MHz */
	AM_FAN_RPM,
	AM_PCIE_WIDTH,  /* lanes */
	AM_PCIE_SPEED,  /* GT/s */
	AM_VOLTAGE_GFX, /* millivolts */
	AM_VOLTAGE_SOC,
	AM_VOLTAGE_MEM,
	AM__COUNT
};

struct amdgpu_metrics {
	unsigned format, content; /* the table's revision, 1.3 -> 1 and 3 */
	unsigned size;            /* its structure_size, bytes */
	double v[AM__COUNT];      /* NAN: not in this layout, or all-ones (unknown) */
	bool has_throttle;
	uint64_t throttle; /* indep_throttle_status: SMU_THROTTLER_* bits */
};

/*
 * Decode the gpu_metrics table in buf (len bytes, as read from the file).
 * The header's revision must name a layout this file knows and its
 * structure_size must equal that layout's size and fit in len before any
 * field is read. Returns 0, or E_PARSE (too short, a size that does not
 * match) or E_VERSION (a revision not known here) with a message in err;
 * m is then all unknown. Fields that hold all-ones (0xFFFF, ...) stay NAN.
 */
int amdgpu_metrics_decode(const void *buf, size_t len, struct amdgpu_metrics *m, struct err *err);

/* Whether format.content names a layout amdgpu_metrics_decode() reads. */
bool amdgpu_metrics_known(unsigned format, unsigned content);

/*
 * Parse the text of pp_dpm_sclk, pp_dpm_mclk or another pp_dpm_*clk file:
 * lines "<n>: <MHz>Mhz" with a '*' on the current one, in all the forms
 * kernels print (a space before '*' or not, an "S:" deep-sleep line, two
 * starred lines, zeros while the engine is off, a middle line that is the
 * current clock between two levels). Lines are kept in the kernel's order;
 * lv->current is the first starred line, or -1. Text ends at len or at a
 * NUL (sysfs pages padded with NULs). Returns the number of lines kept
 * (at most 16); 0 for an empty file or one with no level line.
 */
unsigned amdgpu_parse_levels(const char *text, size_t len, struct clock_levels *lv);

/* The highest level of lv in MHz, or 0 when it has none above 0. */
uint32_t amdgpu_levels_max(const struct clock_levels *lv);

/*
 * The highest clock of one section ("OD_SCLK", "OD_MCLK") of
 * pp_od_clk_voltage: the upper end of the range the firmware keeps the
 * clock in now (the user's overdrive setting, or its default). 0 when the
 * text has no such section or no clock in it (RDNA4 has only offsets).
 */
uint32_t amdgpu_od_max(const char *text, size_t len, const char *section);

/*
 * The PCIe generation of a link speed as PCI sysfs prints it ("16.0 GT/s
 * PCIe" -> 4), or of a speed in GT/s; -1 for "Unknown" or a speed that is
 * no PCIe generation.
 */

/*
 * Parse a RAS block's count file ("ue: 1\nce: 3\n"). Returns 0 and both
 * counts, or E_PARSE when either is missing.
 */
int amdgpu_parse_ras(const char *text, uint64_t *ue, uint64_t *ce);

/*
 * The clock event reasons (enum clock_reason bits) that the throttler bits
 * in s amount to: power limits (PPT, SPL, FPPT, SPPT, TDC, EDC, APCC, PPM)
 * are the power cap, temperature limits the driver's thermal slowdown,
 * VR_HOT and PROCHOT a hardware slowdown. The driver's names of the active
 * throttlers, joined by ", ", go to names (cut at a whole name when it is
 * full).
 */
unsigned amdgpu_throttle_reasons(uint64_t s, char *names, size_t size);

/* The reasons amdgpu_throttle_reasons() can give (GF_CLOCK_REASONS_SUPPORTED). */
unsigned amdgpu_throttle_supported(void);

#endif
