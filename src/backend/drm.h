/*
 * The DRM backend's parts: every GPU with a DRM card node that NVML does not
 * own (amdgpu, i915, xe, msm, panfrost, v3d, nouveau, ...). drm.c finds the
 * cards in sysfs, checks runtime power management, names them, and lists
 * their processes from DRM fdinfo; a driver module (drm_amdgpu.c,
 * drm_intel.c, drm_generic.c) reads what only that driver exposes.
 *
 * Every path a module reads is under cfg->sysfs_root (or proc_root), so the
 * same code reads a real machine and a fixture tree. A module never opens
 * /dev (nothing that needs a DRM fd or /dev/kfd) and never writes.
 */
#ifndef GPUSCOPE_DRM_H
#define GPUSCOPE_DRM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gs_config;
struct gpu_device;
struct gpu_snapshot;

/* One DRM card, as sysfs shows it. */
struct drm_card {
	char name[16];         /* "card1" */
	unsigned minor;        /* its DRM minor (1 for card1) */
	char render[16];       /* its render node, "renderD128", or "" */
	unsigned render_minor; /* 128, or 0 without a render node */
	char driver[32];       /* "amdgpu", "i915", "xe", "msm", ... ("" when unbound) */
	char dev[96]; /* the device directory, relative to the sysfs root: "class/drm/card1/device"
	               */
	char pci_addr[16];       /* "0000:03:00.0", or "" when the device is not on PCI */
	char platform[64];       /* the device's own sysfs name ("0000:03:00.0", "fd00000.gpu") */
	unsigned vendor, device; /* PCI ids, 0 when not PCI */
	unsigned subsys_vendor, subsys_device;
	bool pci;
};

/* A driver module of the DRM backend. */
struct drm_module {
	const char *name;
	/* Does this module read this card? (the first module that says yes does) */
	bool (*match)(const struct drm_card *card);
	/*
	 * Identity and static facts into dev (drm.c has filled vendor, driver,
	 * PCI ids and bus id; it fills the name from pci.ids when the module
	 * leaves it empty). *priv receives the module's state for the card (may
	 * stay NULL). Not called while the card is runtime-suspended: read()
	 * must then fill what scan() would have, the first time it runs.
	 */
	int (*scan)(const struct gs_config *cfg, const struct drm_card *card,
	            struct gpu_device *dev, void **priv);
	/* Dynamic facts into dev. Never called while the card is suspended. */
	int (*read)(const struct gs_config *cfg, const struct drm_card *card, void *priv,
	            struct gpu_device *dev);
	/*
	 * Optional: why the module could not measure the GPU's busy time itself
	 * (shown when drm.c falls back to fdinfo), or NULL.
	 */
	const char *(*util_note)(const struct drm_card *card, void *priv);
	/* Optional: some value of this card needs two readings (energy, PMU counters). */
	bool (*wants_window)(const struct drm_card *card, void *priv);
	/*
	 * Optional: processes the module finds by itself (amdgpu: ROCm compute
	 * from /sys/class/kfd), appended to out with pid, type and memory; drm.c
	 * merges them with the DRM clients of the same pid.
	 */
	int (*read_procs)(const struct gs_config *cfg, const struct drm_card *card, void *priv,
	                  const struct gpu_device *dev, struct gpu_snapshot *out);
	void (*free)(void *priv);
};

extern const struct drm_module drm_module_amdgpu;
extern const struct drm_module drm_module_intel;
extern const struct drm_module drm_module_generic;

/*
 * Helpers for modules. rel is relative to the card's device directory
 * ("gpu_busy_percent", "hwmon/hwmon4/temp1_input"). They return 0 or a
 * negative status, never print, and treat a file that ends at its first NUL
 * (sysfs pages padded with NULs) as ending there.
 */
int drm_read_u64(const struct gs_config *cfg, const struct drm_card *card, const char *rel,
                 uint64_t *v);
int drm_read_s64(const struct gs_config *cfg, const struct drm_card *card, const char *rel,
                 int64_t *v);
int drm_read_line(const struct gs_config *cfg, const struct drm_card *card, const char *rel,
                  char *buf, size_t size);

/*
 * Is the card in runtime suspend? Reading its runtime_status does not wake
 * it; reading anything else of it may, so check this first.
 */
bool drm_suspended(const struct gs_config *cfg, const struct drm_card *card);

/* Mark dev suspended, without readings (its identity stays). */
void drm_mark_suspended(struct gpu_device *dev);

/* The PCIe generation of a transfer rate ("16.0 GT/s PCIe", 16.0), or -1. */
int drm_pcie_gen(const char *speed);
int drm_pcie_gen_of(double gts);

/*
 * The PCIe link of a PCI card from the device's own attributes
 * (current_link_speed/width, max_link_speed/width), for any driver.
 */
void drm_read_pcie(const struct gs_config *cfg, const struct drm_card *card,
                   struct gpu_device *dev);

/*
 * The card's hwmon directory, relative to its device directory
 * ("hwmon/hwmon4"); returns false when it has none.
 */
bool drm_hwmon(const struct gs_config *cfg, const struct drm_card *card, char *rel, size_t size);

/*
 * The channel number N of the hwmon entry "<type>N_label" whose content is
 * label ("temp", "edge" -> 1), or -1 when there is none.
 */
int drm_hwmon_channel(const struct gs_config *cfg, const struct drm_card *card, const char *hwmon,
                      const char *type, const char *label);

#endif
