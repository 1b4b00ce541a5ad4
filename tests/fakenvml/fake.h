/*
 * Internals of the fake libnvidia-ml.so.1 that the test suite and
 * `gpuscope --demo` load instead of NVIDIA's: the scenario model that
 * scenario.c reads (docs/scenario-format.md) and the plumbing that every
 * exported entry point goes through (init state, scenario time, faults, log).
 */
#ifndef GPUSCOPE_FAKENVML_FAKE_H
#define GPUSCOPE_FAKENVML_FAKE_H

#include <stdbool.h>
#include <stddef.h>

#include "backend/nvml_abi.h"

/* the library is built with -fvisibility=hidden: only these are exported */
#define FAKE_API __attribute__((visibility("default")))

/* handles point into a static table, so they survive nvmlShutdown/nvmlInit */
#define FAKE_MAX_GPUS 64

/* MIG devices a GPU can have (nvmlDeviceGetMaxMigDeviceCount of an A100 or H100) */
#define FAKE_MAX_MIG 7

/* NVML_NVLINK_MAX_LINKS of nvml.h */
#define FAKE_NVLINK_MAX_LINKS 18
/* an nvlink_peers entry `switch`: the link leads to an NVSwitch */
#define FAKE_NVLINK_SWITCH 0xFF

/* nvmlTemperature_v1_t is in nvml_abi.h */

/*
 * A value expression: what a numeric key is worth at scenario time t.
 */
enum expr_kind {
	EX_CONST,
	EX_STEPS,
	EX_RAMP,
	EX_SQUARE,
	EX_SINE,
	EX_NA,    /* the call answers NOT_SUPPORTED */
	EX_ERROR, /* the call answers u.error */
};

struct step {
	double t, v;
};

struct expr {
	enum expr_kind kind;
	union {
		double value;
		nvmlReturn_t error;
		struct {
			double v0, v1, t0, t1;
		} ramp;
		struct {
			double low, high, period, duty;
		} square;
		struct {
			double min, max, period;
		} sine;
	} u;
	size_t nr_steps;
	struct step steps[]; /* EX_STEPS, times ascending */
};

/* The numeric keys of [gpu]; the four of each group stay in NVML's enum order. */
enum gpu_num {
	GK_BRAND,
	GK_ARCHITECTURE,
	GK_MINOR_NUMBER,
	GK_TEMPERATURE,
	GK_MEMORY_TEMPERATURE,
	GK_TEMP_SHUTDOWN,
	GK_TEMP_SLOWDOWN,
	GK_TEMP_MEM_MAX,
	GK_TEMP_GPU_MAX, /* threshold types 0..3 */
	GK_TEMP_MARGIN,
	GK_NUM_FANS,
	GK_FAN_SPEED,
	GK_POWER_USAGE,
	GK_POWER_INSTANT,
	GK_POWER_LIMIT_ENFORCED,
	GK_POWER_LIMIT,
	GK_POWER_LIMIT_DEFAULT,
	GK_POWER_LIMIT_MIN,
	GK_POWER_LIMIT_MAX,
	GK_ENERGY,
	GK_MEMORY_TOTAL,
	GK_MEMORY_RESERVED,
	GK_MEMORY_USED,
	GK_BAR1_TOTAL,
	GK_BAR1_USED,
	GK_UTIL_GPU,
	GK_UTIL_MEMORY,
	GK_UTIL_ENCODER,
	GK_UTIL_DECODER,
	GK_UTIL_JPEG,
	GK_UTIL_OFA,
	GK_CLOCK_GRAPHICS, /* nvmlClockType_t 0..3 */
	GK_CLOCK_SM,
	GK_CLOCK_MEM,
	GK_CLOCK_VIDEO,
	GK_MAX_CLOCK_GRAPHICS,
	GK_MAX_CLOCK_SM,
	GK_MAX_CLOCK_MEM,
	GK_MAX_CLOCK_VIDEO,
	GK_PSTATE,
	GK_CLOCKS_EVENT_REASONS,
	GK_CLOCKS_EVENT_REASONS_SUPPORTED,
	GK_PCIE_GEN,
	GK_PCIE_GEN_MAX,
	GK_PCIE_GEN_GPU_MAX,
	GK_PCIE_WIDTH,
	GK_PCIE_WIDTH_MAX,
	GK_PCIE_REPLAY,
	GK_PCIE_TX,
	GK_PCIE_RX,
	GK_PERSISTENCE_MODE,
	GK_COMPUTE_MODE,
	GK_DISPLAY_MODE,
	GK_DISPLAY_ACTIVE,
	GK_MIG_MODE,
	GK_MIG_MODE_PENDING,
	GK_ECC_MODE,
	GK_ECC_MODE_PENDING,
	GK_ECC_CORRECTED_VOLATILE, /* + 2 * counter type + error type */
	GK_ECC_UNCORRECTED_VOLATILE,
	GK_ECC_CORRECTED_AGGREGATE,
	GK_ECC_UNCORRECTED_AGGREGATE,
	GK_RETIRED_SBE, /* + page retirement cause */
	GK_RETIRED_DBE,
	GK_RETIRED_PENDING,
	GK_REMAPPED_CORR,
	GK_REMAPPED_UNCORR,
	GK_REMAPPED_PENDING,
	GK_REMAPPED_FAILURE,
	GK_ENCODER_SESSIONS,
	GK_ENCODER_FPS,
	GK_ENCODER_LATENCY,
	GK_POWER_AVERAGE, /* field 185; power_usage when absent */
	GK_MEMORY_FREE,   /* overrides the free memory derived from the others */
	GK_EVENT_TYPES,   /* nvmlDeviceGetSupportedEventTypes; default in event.c */
	/* GPM (gpm.c): whether the device has it, then one key per metric, in gpm.c's order */
	GK_GPM_SUPPORTED,
	GK_GPM_GRAPHICS_UTIL,
	GK_GPM_SM_UTIL,
	GK_GPM_SM_OCCUPANCY,
	GK_GPM_TENSOR_UTIL,
	GK_GPM_DRAM_BW_UTIL,
	GK_GPM_FP64_UTIL,
	GK_GPM_FP32_UTIL,
	GK_GPM_FP16_UTIL,
	GK_GPM_PCIE_TX, /* MiB/s, as NVML gives it */
	GK_GPM_PCIE_RX,
	GK_GPM_NVLINK_TX,
	GK_GPM_NVLINK_RX,
	/* NVLink (nvlink.c): a bitmask of links down, the version, then per-link counters */
	GK_NVLINK_DOWN,
	GK_NVLINK_VERSION,
	GK_NVLINK_REPLAY, /* nvmlNvLinkErrorCounter_t order */
	GK_NVLINK_RECOVERY,
	GK_NVLINK_CRC_FLIT,
	GK_NVLINK_CRC_DATA,
	GK_NVLINK_TX, /* KiB */
	GK_NVLINK_RX,
	/* nvmlDeviceGetViolationStatus, ns: policies 0..5, then 10 and 11 */
	GK_VIOL_POWER,
	GK_VIOL_THERMAL,
	GK_VIOL_SYNC_BOOST,
	GK_VIOL_BOARD_LIMIT,
	GK_VIOL_LOW_UTIL,
	GK_VIOL_RELIABILITY,
	GK_VIOL_APP_CLOCKS,
	GK_VIOL_BASE_CLOCKS,
	GK__COUNT
};

/* The string keys of [gpu]. */
enum gpu_str {
	GS_NAME,
	GS_UUID,
	GS_SERIAL,
	GS_VBIOS,
	GS_INFOROM_IMAGE,
	GS_BOARD_PART_NUMBER,
	GS__COUNT
};

enum fault_kind {
	FAULT_FAIL,
	FAULT_DELAY,
};

/* one Xid error of a GPU's `xid` key */
struct xid_event {
	double t; /* scenario time, >= 0 (and below `period` when there is one) */
	unsigned int code;
};

/* `fail` or `delay`, active while from <= t < until */
struct fault {
	struct fault *next; /* file order */
	enum fault_kind kind;
	const char *fn; /* an exported name, or a prefix when prefix is set */
	size_t fn_len;
	bool prefix;
	nvmlReturn_t error; /* FAULT_FAIL */
	double ms;          /* FAULT_DELAY */
	double from, until;
};

struct gpu {
	unsigned int index;
	const char *str[GS__COUNT];                                /* NULL: absent */
	const struct expr *num[GK__COUNT];                         /* NULL: absent */
	char bus_id[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];           /* 00000000:BB:DD.F */
	char bus_id_legacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE]; /* 0000:BB:DD.F */
	unsigned int pci_domain, pci_bus, pci_device, pci_function;
	unsigned int pci_device_id, pci_subsystem_id;
	bool has_compute_cap;
	int cc_major, cc_minor;
	double lost, reset_required; /* scenario time; INFINITY: never */
	struct fault *faults;
	const struct xid_event *xids; /* times ascending; they recur each `period` */
	size_t nr_xids;
	unsigned int xid_line; /* of the `xid` key, for messages */
	/* topology_group / topology_node: a PCIe switch, and a CPU (NUMA node) */
	bool has_topology;
	unsigned int topology_group, topology_node;
	/* nvlink_peers: link i goes to GPU nvlink_peer[i], or to an NVSwitch (FAKE_NVLINK_SWITCH)
	 */
	bool has_nvlink;
	unsigned int nr_nvlinks;
	unsigned char nvlink_peer[FAKE_NVLINK_MAX_LINKS];
	unsigned int nvlink_line; /* of the `nvlink_peers` key, for messages */
	/*
	 * MIG (mig.c): a GPU's [mig] sections are its MIG devices, each a gpu of
	 * its own that answers the device calls through its MIG handle; parent
	 * is set on those, and index is the parent's.
	 */
	struct gpu *mig[FAKE_MAX_MIG];
	unsigned int nr_mig;
	const struct gpu *parent;
	unsigned int mig_index; /* position within the parent */
	unsigned int gpu_instance, compute_instance;
	unsigned int sm_count; /* multiprocessor_count; 0: absent */
	const char *profile;   /* "1g.10gb" */
	unsigned int mig_line; /* of its section, for messages */
	/* the name and UUID mig_finish() makes when the section gives none */
	char mig_name[128], mig_uuid[96];
};

/* what a process section puts in which list */
enum proc_type {
	PT_COMPUTE = 1 << 0,
	PT_GRAPHICS = 1 << 1,
	PT_MPS = 1 << 2,
};

enum proc_util { PU_SM, PU_MEM, PU_ENC, PU_DEC, PU__COUNT };

/* one [process PID] section: a process on one GPU */
struct proc {
	struct proc *next; /* file order */
	unsigned int pid;
	unsigned int gpu;
	unsigned int types;             /* enum proc_type bits */
	const struct expr *used_memory; /* NULL: NVML_VALUE_NOT_AVAILABLE */
	double start, end;
	unsigned int gpu_instance, compute_instance;
	const struct expr *util[PU__COUNT]; /* NULL: 0 */
	const char *name;
	unsigned int line; /* of its section, for messages */
};

struct scenario_block; /* every allocation of a scenario, freed together */

struct scenario {
	const char *path;
	const char *driver_version, *nvml_version;
	const struct expr *cuda_version;
	nvmlReturn_t init_error; /* NVML_SUCCESS: none */
	double period;           /* 0: time does not wrap */
	bool cc_layout;          /* process_v3_layout = cc */
	unsigned count_hint;     /* process_count_hint: 0 = off */
	const char *live_dir;    /* live_processes, or FAKE_NVML_LIVE_DIR; NULL: none */
	struct fault *faults;
	unsigned int nr_gpus;
	struct gpu gpus[FAKE_MAX_GPUS];
	struct proc *procs;

	/* the clock, from the environment at load */
	bool fixed_time;
	double fixed_t; /* FAKE_NVML_TIME */
	double epoch;   /* wall-clock seconds that are scenario time 0 */
	double speed;   /* FAKE_NVML_SPEED: scenario seconds per wall-clock second (1) */

	struct scenario_block *blocks;
};

/* scenario.c */

/*
 * Read the scenario file at path. On success *out owns everything and is
 * released with scenario_free(). On failure the reason has been printed on
 * stderr as `fake nvml: <file>:<line>: <what>` and -1 is returned.
 */
int scenario_load(const char *path, struct scenario **out);
void scenario_free(struct scenario *sc);

/*
 * The value of e at time t in *v, or the NVML error the call must return:
 * NOT_SUPPORTED when e is NULL (key absent) or N/A.
 */
nvmlReturn_t expr_eval(const struct expr *e, double t, double *v);

/* A number of seconds as scenarios write it (FAKE_NVML_TIME, FAKE_NVML_EPOCH). */
bool fake_parse_seconds(const char *s, double *out);

/* The first nvmlPciInfo_t (plain nvmlDeviceGetPciInfo): busId[16], five words, 16 reserved. */
#define FAKE_PCI_INFO_V1_SIZE 52

/* device.c: the nvmlPciInfo_t of g; v1 writes only the 52 bytes of the first struct */
nvmlReturn_t gpu_pci_info(const struct gpu *g, nvmlPciInfo_t *pci, bool v1);

/* nvlink.c: NVLink links */

struct call;

/*
 * Link `link` of the call's GPU: NOT_SUPPORTED without `nvlink_peers`,
 * INVALID_ARGUMENT past NVML_NVLINK_MAX_LINKS; else *active: the link has a
 * peer and `nvlink_down` does not take it down at the call's time.
 */
nvmlReturn_t fake_nvlink_link(const struct call *c, unsigned int link, bool *active);
/* An NVLink throughput field (138, 139) of nvmlDeviceGetFieldValues into fv. */
void fake_nvlink_field(const struct call *c, nvmlFieldValue_t *fv);

/* mig.c: MIG devices */

/*
 * After loading: a MIG device takes its parent's bus id, lost and
 * reset_required times, and, when absent, a name ("<parent's> MIG <profile>")
 * and a UUID ("MIG-" and the parent's, its last four digits the instance ids).
 */
void mig_finish(struct gpu *mig);
/* The MIG device of a MIG handle of the loaded scenario; NULL for any other handle. */
const struct gpu *mig_gpu_of(const struct scenario *sc, nvmlDevice_t device);

/* live.c: the processes that tests register in live_dir */

/* one process on one GPU, from a file DIR/<pid> */
struct live_entry {
	unsigned int pid;
	unsigned int gpu;          /* index in the scenario */
	unsigned long long bytes;  /* its lines on this GPU, summed */
	unsigned long long leaked; /* of which its `leak` lines */
	bool running;              /* /proc/<pid> is a process, not a zombie */
};

struct live_list {
	struct live_entry *v; /* by pid, then GPU */
	size_t n, cap;
};

/*
 * The files of sc->live_dir now, into *out (released with live_free()); an
 * empty list when there is no such directory, or it cannot be read.
 */
void live_read(const struct scenario *sc, struct live_list *out);
void live_free(struct live_list *l);

/* The bytes live processes hold on a GPU: running ones, and leaks of gone ones. */
unsigned long long live_used(const struct live_list *l, unsigned int gpu);

/* Is pid a running process of the list? */
bool live_find(const struct live_list *l, unsigned int pid);

/* Is pid a process, and not a zombie? */
bool live_pid_running(unsigned int pid);

/* errors.c */

/* NVML's name of an error without its prefix ("GPU_IS_LOST"); false if unknown */
bool nvml_error_by_name(const char *name, nvmlReturn_t *code);

/* notsup.c, generated from symbols.txt */
extern const char *const fake_symbols[]; /* every exported nvml* name, NULL-terminated */

/* runtime.c: the frame of every call */

struct call {
	const char *fn;
	const struct scenario *sc; /* NULL before nvmlInit */
	const struct gpu *gpu;     /* NULL for system calls */
	double t;                  /* scenario time of the call */
};

/* Checks that NVML is initialised, and starts c. */
nvmlReturn_t call_begin(struct call *c, const char *fn);

/*
 * Applies the faults of [system] and, when gpu is not NULL, those of the GPU
 * and its lost/reset_required time; sleeps for `delay`, without any lock.
 */
nvmlReturn_t call_faults(struct call *c, const struct gpu *gpu);

/* call_begin() and call_faults() for a call without a device */
nvmlReturn_t call_system(struct call *c, const char *fn);

/* call_begin() and call_faults() for a call on a device handle */
nvmlReturn_t call_device(struct call *c, const char *fn, nvmlDevice_t device);

/* The GPU of a handle of the loaded scenario; NULL for a stale or foreign one. */
const struct gpu *call_gpu_of(const struct call *c, nvmlDevice_t device);

/* Logs the call (FAKE_NVML_LOG) and returns rc. */
nvmlReturn_t call_end(const struct call *c, nvmlReturn_t rc);

/* The handle of a GPU of the loaded scenario. */
nvmlDevice_t gpu_handle(const struct gpu *gpu);

/* Scenario time now, wrapped by `period` when wrap is set (FAKE_NVML_TIME: fixed). */
double fake_time(const struct scenario *sc, bool wrap);

/* The fake's wall clock in microseconds: epoch + scenario time, before wrapping. */
unsigned long long call_wall_us(const struct call *c);

/*
 * NVML's rule for strings: NOT_SUPPORTED when s is NULL (key absent),
 * INSUFFICIENT_SIZE when buf cannot hold s and its terminator.
 */
nvmlReturn_t put_string(const char *s, char *buf, unsigned int length);

/* An entry point that the fake does not implement. */
nvmlReturn_t fake_notsup(const char *fn);

/*
 * Conversions of an evaluated value to what NVML returns: rounded to the
 * nearest integer and clamped to the range of the type.
 */
unsigned int to_uint(double v);
int to_int(double v);
unsigned long long to_ull(double v);

#endif
