/*
 * What a run of gpuscope is configured with: where it reads the system from
 * (real /sys and /proc, or fixture roots in tests), which NVML library to
 * load, and the clock. Filled once by main from argv and the environment,
 * then passed down read-only; nothing reads the environment behind it.
 */
#ifndef GPUSCOPE_CONFIG_H
#define GPUSCOPE_CONFIG_H

#include <stdbool.h>

struct gs_config {
	const char *root;        /* what stands for /: "/" or --root / GPUSCOPE_ROOT */
	const char *sysfs_root;  /* "/sys", or GPUSCOPE_SYSFS_ROOT */
	const char *proc_root;   /* "/proc", or GPUSCOPE_PROC_ROOT */
	const char *passwd_file; /* NULL: use getpwuid_r(); else a passwd(5) file */
	const char *nvml_path;   /* GPUSCOPE_NVML: the library to load, or NULL */
	const char *mhd_path;    /* GPUSCOPE_MHD (a test hook): serve's libmicrohttpd, or NULL */
	double fixed_time;       /* GPUSCOPE_CLOCK: seconds since the epoch; 0 = real clock */
	double timeout;          /* seconds to wait for one device's readings */
	double window;           /* seconds between the two readings of a one-shot sample */
	double reindex;          /* seconds between walks of /proc for DRM clients */
	bool want_procs;         /* read processes */
	const char *replay;      /* gpuscope replay FILE: samples come from this recording */
	double replay_speed;     /* replay pace: 1 as recorded, 0 as fast as it reads */
	double replay_from;      /* replay from the last sample at or before this time (0: start) */
	bool simulated;          /* --demo */
	char *owned[4];          /* strings this config allocated (gs_config_set_root) */
};

/* Defaults for a real machine. */
void gs_config_init(struct gs_config *cfg);

/*
 * Read the machine from a tree that stands for / (--root, GPUSCOPE_ROOT):
 * sysfs from root/sys, procfs from root/proc, user names from
 * root/etc/passwd when it exists, pci.ids from root/usr/share/...
 */
void gs_config_set_root(struct gs_config *cfg, const char *root);

/* Free what gs_config_set_root() allocated. */
void gs_config_release(struct gs_config *cfg);

#endif
