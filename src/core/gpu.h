/*
 * The sample model: one snapshot of the machine holds its GPUs (identity,
 * state and numeric fields) and the processes using them (what the driver
 * says, plus what /proc says). Backends fill it; every front end reads it.
 *
 * Ownership: a snapshot owns its devices and processes and every string in
 * them; gpu_snapshot_release() frees all of it.
 */
#ifndef GPUSCOPE_GPU_H
#define GPUSCOPE_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/fields.h"

enum gpu_vendor {
	VENDOR_UNKNOWN = 0,
	VENDOR_NVIDIA,
	VENDOR_AMD,
	VENDOR_INTEL,
	VENDOR_OTHER,
};

enum dev_state {
	DEV_OK = 0,
	DEV_LOST,           /* fell off the bus (GPU_IS_LOST) */
	DEV_RESET_REQUIRED, /* needs a GPU reset or reboot */
	DEV_NOT_RESPONDING, /* did not answer before the deadline */
	DEV_NO_PERMISSION,  /* cannot be opened by this user */
	DEV_ERROR,          /* any other failure; see state_msg */
	DEV_SUSPENDED,      /* in runtime suspend: not woken, so not read */
};

/* What a lost GPU's state_msg says. */
#define DEV_LOST_MSG \
	"GPU is lost (fallen off the bus): reboot, then check its power, PCIe slot and kernel log"

/* A bitset wide enough for every enum gpu_field. */
struct field_set {
	uint64_t bits[(GF__COUNT + 63) / 64];
};

/* Most engine classes any driver reports (amdgpu has 8, xe 6). */
#define GPU_MAX_ENGINES 12

/* NVIDIA Xid errors of one code, counted since the collector opened (NVML events) */
#define GPU_MAX_XID 16
struct xid_count {
	uint32_t xid;
	uint64_t count;
};

/* Use of one engine class ("gfx", "render", "vcs", ...), percent of its capacity. */
struct engine_use {
	char name[24];
	double percent;
};

/* The clock levels a GPU may run at (AMD DPM), and the one it is at. */
struct clock_levels {
	unsigned nr;
	uint32_t mhz[16];
	int current; /* index into mhz, or -1 when none is marked */
};

/* One NVLink link of a GPU (NVML link numbers 0 .. GPU_MAX_NVLINK-1). */
#define GPU_MAX_NVLINK 18
enum nvlink_stat {
	NL_TX_BYTES, /* data sent, bytes, since the driver loaded */
	NL_RX_BYTES,
	NL_CRC_FLIT, /* error counters, since the driver loaded */
	NL_CRC_DATA,
	NL_REPLAY,
	NL_RECOVERY,
	NL__COUNT
};
struct nvlink_link {
	bool present; /* NVML answered for this link number */
	bool active;  /* the link is up */
	unsigned version;
	uint64_t v[NL__COUNT];
	unsigned valid; /* bit (1 << enum nvlink_stat) */
};

struct gpu_device {
	unsigned index; /* the vendor's index (NVML index for NVIDIA) */
	enum gpu_vendor vendor;
	enum dev_state state;
	char state_msg[160]; /* why, when state is not DEV_OK */

	/* identity; empty string = unknown */
	char name[96];
	char uuid[96];
	char serial[32];
	char pci_bus_id[32]; /* "00000000:00:09.0", NVML's spelling */
	char vbios[32];
	char inforom[32]; /* InfoROM image version */
	char board_part[80];
	char brand[32];        /* "Tesla", "GeForce", ... */
	char architecture[16]; /* "Hopper", ... */
	char compute_cap[8];   /* "9.0" */
	char driver[16];       /* kernel driver: "nvidia", "amdgpu", "i915", "xe", ... */
	char card[16];         /* DRM card ("card1"); "" for NVML devices */
	char unique_id[40];    /* AMD unique_id */
	char util_source[24]; /* where GF_UTIL_GPU comes from: "nvml", "gpu_busy_percent", "fdinfo",
	                         ... */
	char util_note[80]; /* why it does not come from a better source ("PMU: permission denied")
	                     */
	char throttle_detail[96]; /* the driver's own names of what holds clocks down */
	uint32_t pci_device_id;   /* (device << 16) | vendor, 0 = unknown */
	uint32_t pci_subsys_id;
	unsigned pci_domain, pci_bus, pci_dev, pci_func;
	bool pci_valid;

	/* numeric fields; see fields.h */
	double v[GF__COUNT];
	struct field_set valid;
	char mem_source[16]; /* which call gave memory: "v2" or "v1" (used includes reserved) */

	/* engine classes, when the driver reports them (DRM GPUs) */
	struct engine_use engine[GPU_MAX_ENGINES];
	unsigned nr_engine;
	struct clock_levels levels_gfx, levels_mem; /* AMD pp_dpm_sclk, pp_dpm_mclk */

	/*
	 * Xid errors seen since the collector opened, by code, in the order
	 * first seen (codes past GPU_MAX_XID are added to the last entry);
	 * only meaningful when xid_watched (the backend listens for them).
	 */
	struct xid_count xid[GPU_MAX_XID];
	unsigned nr_xid;
	bool xid_watched;
	uint32_t xid_last; /* the code of the newest Xid seen; 0 = none yet */

	/* NVLink, link by link (nr_nvlink: links NVML answered for, 0: none) */
	struct nvlink_link nvlink[GPU_MAX_NVLINK];
	unsigned nr_nvlink;

	/*
	 * A MIG device: one GPU instance (and compute instance) of a GPU in MIG
	 * mode, listed as a device of its own after its parent; mig_parent is the
	 * parent's position in the snapshot's dev[]. index is the MIG device's
	 * index within its parent (as nvidia-smi's "MIG dev").
	 */
	bool is_mig;
	unsigned mig_sm_count; /* multiprocessors of a MIG device; 0 = unknown */
	unsigned mig_parent;
	unsigned mig_gi, mig_ci; /* GPU instance and compute instance ids */
	char mig_profile[32];    /* "1g.10gb", "" = unknown */

	/*
	 * Who the GPU is allocated to, even while idle (the kubelet's
	 * pod-resources API); "" = none known
	 */
	char alloc_namespace[64];
	char alloc_pod[254];
	char alloc_container[64];

	/* private to the backend that made the device */
	unsigned backend; /* index in the collector's backend list */
	unsigned handle;  /* the backend's own number for it */
};

enum proc_type {
	PROC_COMPUTE = 1 << 0,
	PROC_GRAPHICS = 1 << 1,
	PROC_MPS = 1 << 2, /* listed by the MPS server as one of its clients */
	PROC_DRM = 1 << 3, /* a DRM client (fdinfo): graphics or compute, the kernel does not say */
};

enum proc_field {
	PF_GPU_MEM,  /* bytes of GPU memory */
	PF_SM_UTIL,  /* percent, over the last second */
	PF_MEM_UTIL, /* percent of memory-controller time */
	PF_ENC_UTIL,
	PF_DEC_UTIL,
	PF_GPU_INSTANCE, /* MIG GPU instance id */
	PF_COMPUTE_INSTANCE,
	PF_UID,
	PF_NSPID,       /* pid inside its own (innermost) namespace */
	PF_CPU_TIME,    /* seconds of CPU since it started */
	PF_CPU_PERCENT, /* over the window of the sample, or its lifetime */
	PF_RSS,         /* bytes */
	PF_START_TIME,  /* seconds since the epoch */
	PF_SYS_MEM,     /* bytes of system memory mapped for the GPU (GTT, system regions) */
	PF__COUNT
};

enum proc_host {
	PHOST_UNREAD = 0,  /* /proc not consulted */
	PHOST_OK,          /* all of it read */
	PHOST_PARTIAL,     /* some of /proc/<pid> could not be read */
	PHOST_NOT_VISIBLE, /* the pid is not in our pid namespace (or hidden) */
};

struct gpu_proc {
	unsigned dev;  /* index into the snapshot's dev[] */
	uint32_t pid;  /* as the driver reports it (host pid namespace) */
	unsigned type; /* enum proc_type bits */
	double v[PF__COUNT];
	uint32_t valid; /* bit (1 << enum proc_field) */
	enum proc_host host;
	char *user;                    /* owned; NULL = unknown */
	char *name;                    /* owned; short command name */
	char *cmdline;                 /* owned; arguments joined by spaces */
	char *container;               /* owned; container id (12 hex digits, as docker ps shows) */
	const char *container_runtime; /* static: "docker", "containerd", "cri-o", "podman", "lxc",
	                                  ... */
	char *pod;                     /* owned; Kubernetes pod uid, when the cgroup names one */
	char *pod_name;                /* owned; Kubernetes pod name (from the kubelet's files) */
	char *pod_namespace;           /* owned; Kubernetes namespace */
	char *container_name;          /* owned; Kubernetes container name (or docker's name) */
	char *slurm_job;      /* owned; Slurm job id ("1234", "1234_7" for an array task) */
	char *slurm_step;     /* owned; Slurm step ("0", "batch", "extern", "interactive") */
	char *slurm_user;     /* owned; the Slurm job's user */
	char *cgroup;         /* owned; the cgroup path it was found in */
	uint64_t start_ticks; /* kernel start time, for telling reused pids apart */
	bool gpu_denied;      /* its GPU use could not be read (fdinfo needs ptrace rights) */
	/*
	 * DRM engine classes (fdinfo), owned: nr_engine entries, at most
	 * GPU_MAX_ENGINES; NULL when there are none. Allocated apart, so that
	 * a process without any (every NVIDIA one) stays small: a snapshot of
	 * 1000 processes is alive two or three times over in top.
	 */
	unsigned nr_engine;
	struct engine_use *engine;
};

struct nvidia_sysinfo {
	char driver_version[80]; /* empty = unknown */
	char nvml_version[80];
	int cuda_version;  /* 13010 means 13.1; 0 = unknown */
	char library[256]; /* path of the libnvidia-ml.so that was loaded */
};

struct gpu_snapshot {
	double time; /* seconds since the epoch */
	char hostname[256];
	bool simulated; /* from the fake driver or --demo */
	struct nvidia_sysinfo nvidia;

	struct gpu_device *dev;
	size_t nr_dev, alloc_dev;
	struct gpu_proc *proc;
	size_t nr_proc, alloc_proc;

	/* one-line notes worth showing (why a backend found nothing, ...) */
	char **note;
	size_t nr_note, alloc_note;
};

void gpu_snapshot_init(struct gpu_snapshot *s);
void gpu_snapshot_release(struct gpu_snapshot *s);
/* Append a zeroed device and return it (valid until the next append). */
struct gpu_device *gpu_snapshot_add_dev(struct gpu_snapshot *s);
/* Append a zeroed process and return it (valid until the next append). */
struct gpu_proc *gpu_snapshot_add_proc(struct gpu_snapshot *s);
void gpu_snapshot_note(struct gpu_snapshot *s, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
/*
 * The whole GPU that device d of s is or is part of: d itself, or for a MIG
 * device its parent.
 */
const struct gpu_device *gpu_snapshot_gpu_of(const struct gpu_snapshot *s,
                                             const struct gpu_device *d);
/*
 * The index d is known by in tables and -i: "3" for a GPU, "GPU:MIG dev"
 * ("0:1") for a MIG device. Returns buf.
 */
char *gpu_device_label(const struct gpu_snapshot *s, const struct gpu_device *d, char *buf,
                       size_t size);

/* How many GPUs of s (NULL: none) are the vendor's; MIG devices are not counted. */
size_t gpu_snapshot_count(const struct gpu_snapshot *s, enum gpu_vendor vendor);

/*
 * Leave only whole GPUs in s, for what reasons about GPUs (doctor): its MIG
 * devices are taken out, and their processes go back to their GPUs, with
 * their instance ids.
 */
void gpu_snapshot_fold_mig(struct gpu_snapshot *s);

/* Sort processes by device, then pid. */
void gpu_snapshot_sort_procs(struct gpu_snapshot *s);

void gpu_proc_release(struct gpu_proc *p);
/* Set p's engines to a copy of e[0..nr) (nr at most GPU_MAX_ENGINES; 0: none). */
void gpu_proc_set_engines(struct gpu_proc *p, const struct engine_use *e, unsigned nr);

static inline bool
dev_has(const struct gpu_device *d, enum gpu_field f)
{
	return (d->valid.bits[f / 64] >> (f % 64)) & 1;
}

static inline void
dev_set(struct gpu_device *d, enum gpu_field f, double v)
{
	d->v[f] = v;
	d->valid.bits[f / 64] |= (uint64_t)1 << (f % 64);
}

static inline void
dev_unset(struct gpu_device *d, enum gpu_field f)
{
	d->v[f] = 0;
	d->valid.bits[f / 64] &= ~((uint64_t)1 << (f % 64));
}

/*
 * Forget every reading of d (a GPU that stopped answering has no current
 * values); its identity and state stay.
 */
void gpu_device_clear_readings(struct gpu_device *d);

/* Value of f, or NAN when unknown. */
double dev_get(const struct gpu_device *d, enum gpu_field f);

static inline bool
proc_has(const struct gpu_proc *p, enum proc_field f)
{
	return (p->valid >> f) & 1;
}

static inline void
proc_set(struct gpu_proc *p, enum proc_field f, double v)
{
	p->v[f] = v;
	p->valid |= (uint32_t)1 << f;
}

/*
 * Whether d is the GPU that id names: an index ("3"), a UUID or a prefix of
 * one ("GPU-5d2c", "MIG-1a2b"; *ambiguous_prefix set when it is not the whole
 * UUID), or a PCI bus id in any common spelling ("0000:3b:00.0", "3B:00.0").
 * A MIG device matches its UUID only: index and bus id are its GPU's.
 */
bool gpu_match_id(const struct gpu_device *d, const char *id, bool *ambiguous_prefix);

/*
 * Set selected[i] for the devices of dev[0..nr) that ids names, a comma-
 * separated list of ids as above or "G:M", MIG device M of GPU G (NULL or
 * "": all of them). A MIG device selected selects its GPU, and a GPU named
 * its MIG devices. Returns 0, or E_USAGE naming the first id that matches
 * no GPU, or several.
 */
struct err;
int gpu_select(const struct gpu_device *dev, size_t nr, const char *ids, bool *selected,
               struct err *err);

/*
 * The names of a state, from one table: the key of JSON and metrics ("ok",
 * "lost", "reset_required", ...), the word a table shows for a GPU that
 * failed ("LOST", "RESET REQUIRED", ...; "ok" for DEV_OK), and nvidia-smi's
 * spelling of a value such a GPU could not give ("[GPU is lost]"; NULL for
 * DEV_OK). A value outside the enum reads as DEV_ERROR.
 */
const char *dev_state_key(enum dev_state st);

/*
 * Whether a sample listed d's processes: not when the GPU did not answer,
 * fell off the bus, needs a reset, could not be opened or failed (its list
 * is unknown, which is not empty). A suspended GPU is read as having none.
 */
bool gpu_device_procs_known(const struct gpu_device *d);

/*
 * How many of snap's GPUs have an unknown process list; when why is not
 * NULL and there are any, one line saying which and why ("the processes
 * of GPU 0 and GPU 1 are unknown: not responding") replaces its contents.
 */
struct strbuf;
size_t gpu_snapshot_procs_unknown(const struct gpu_snapshot *snap, struct strbuf *why);

const char *dev_state_word(enum dev_state st);
const char *dev_state_smi(enum dev_state st);
const char *vendor_key(enum gpu_vendor v); /* "nvidia", ... */

#endif
