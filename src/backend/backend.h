/*
 * The one interface every GPU backend implements (NVML; DRM, whose modules
 * read amdgpu, i915, xe and any other DRM driver), the registry of
 * backends, and the wrappers callers use instead of calling through ops
 * directly.
 *
 * A backend is opened once, scans its devices once (identity and static
 * properties go into the snapshot), then reads each device's dynamic values
 * and processes as often as the caller samples. read_device and read_procs
 * may run on worker threads, one device per thread at a time, so a backend
 * must let two threads read two different devices at once.
 */
#ifndef GPUSCOPE_BACKEND_H
#define GPUSCOPE_BACKEND_H

#include <stdbool.h>

struct err;
struct gs_config;
struct gpu_device;
struct gpu_snapshot;

struct backend {
	const struct backend_ops *ops;
	unsigned id; /* position in the collector's list; devices carry it */
};

struct backend_ops {
	const char *name;
	/*
	 * Load and initialise. On failure return a negative status with a
	 * message for the user saying what is missing and what to do;
	 * E_NODEV means "nothing of this vendor here", not a fault.
	 */
	int (*open)(const struct gs_config *cfg, struct backend **out, struct err *err);
	/*
	 * Append this backend's devices to snap with identity and static
	 * fields, and fill the snapshot's system information (driver
	 * versions). A device that cannot be read is still appended, with
	 * its state set.
	 */
	int (*scan)(struct backend *be, struct gpu_snapshot *snap, struct err *err);
	/*
	 * Optional: once per sample, on the caller's thread, before the devices
	 * are read: work shared by all of a backend's devices (one walk of
	 * /proc for DRM clients). now is monotonic seconds.
	 */
	int (*begin_sample)(struct backend *be, double now, struct err *err);
	/*
	 * Optional: whether some value can only be known from two readings
	 * (engine busy time, energy counters). A one-shot caller then takes a
	 * first reading and, a short window later, the one it shows.
	 */
	bool (*wants_window)(struct backend *be);
	/* Fill dev's dynamic fields (and its state, if it failed). */
	int (*read_device)(struct backend *be, struct gpu_device *dev, struct err *err);
	/*
	 * Append the processes using dev to out (their dev member is left
	 * 0: the caller sets it). now is the sample time in seconds since the
	 * epoch, for utilisation windows.
	 */
	int (*read_procs)(struct backend *be, const struct gpu_device *dev, double now,
	                  struct gpu_snapshot *out, struct err *err);
	/*
	 * Optional: once per sample, on the caller's thread, after the devices
	 * are read: add to snap the notes about the sample as a whole (processes
	 * that could not be inspected). Called only when snap holds a device of
	 * this backend.
	 */
	void (*add_notes)(struct backend *be, struct gpu_snapshot *snap);
	/*
	 * Optional: how close two of this backend's devices are, an enum
	 * collect_link (backend/collect.h) in *level; E_NOTSUP when unknown.
	 * May run on any thread, while other threads read devices.
	 */
	int (*topology)(struct backend *be, const struct gpu_device *a, const struct gpu_device *b,
	                int *level);
	/* Release everything; be is invalid afterwards. */
	void (*close)(struct backend *be);
};

/* NULL-terminated list of the backends gpuscope knows, in probe order. */
extern const struct backend_ops *const backend_list[];

extern const struct backend_ops backend_nvml;
extern const struct backend_ops backend_drm;

int backend_open(const struct backend_ops *ops, const struct gs_config *cfg, struct backend **out,
                 struct err *err);
int backend_scan(struct backend *be, struct gpu_snapshot *snap, struct err *err);
int backend_begin_sample(struct backend *be, double now, struct err *err);
bool backend_wants_window(struct backend *be);
int backend_read_device(struct backend *be, struct gpu_device *dev, struct err *err);
int backend_read_procs(struct backend *be, const struct gpu_device *dev, double now,
                       struct gpu_snapshot *out, struct err *err);
void backend_add_notes(struct backend *be, struct gpu_snapshot *snap);
int backend_topology(struct backend *be, const struct gpu_device *a, const struct gpu_device *b,
                     int *level);
void backend_close(struct backend *be);

#endif
