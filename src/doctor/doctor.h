/*
 * gpuscope doctor: findings about how a machine is set up for GPU work.
 *
 * A finding has a stable id ("setup.pci.nouveau"), a severity, a one-line
 * title, its evidence (what was read, and from where), what it means, and
 * what to do, software causes before hardware. Checks (check_*.c) add
 * findings to a report; front ends print it as text or JSON, and its worst
 * severity is the exit code (0 all ok, 1 warnings, 2 errors). Every id a
 * check can emit has a long explanation in the catalog (catalog.c), which
 * `gpuscope doctor --explain ID` prints.
 *
 * Checks read the machine only through cfg's roots (sysfs, procfs, /dev,
 * the environment given in the context), so fixture trees trigger and
 * clear every finding in tests.
 */
#ifndef GPUSCOPE_DOCTOR_H
#define GPUSCOPE_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>

struct gs_config;
struct strbuf;

enum dr_severity {
	DR_OK = 0,
	DR_INFO,
	DR_WARNING,
	DR_ERROR,
};

struct dr_finding {
	const char *id; /* static; in the catalog */
	enum dr_severity severity;
	char *title;     /* owned; one line: what was found */
	char **evidence; /* owned lines: what was read, and from where */
	size_t nr_evidence, alloc_evidence;
	char *meaning; /* owned; what it means, or NULL */
	char *action;  /* owned; what to do, or NULL */
};

struct dr_report {
	struct dr_finding *f;
	size_t nr, alloc;
	/* the least severity that makes the exit status non-zero: DR_OK (unset) and
	   DR_WARNING are the default (a warning), DR_ERROR only an error (doctor --fail-on) */
	enum dr_severity fail_on;
};

#define DR_REPORT_INIT            \
	{                         \
		NULL, 0, 0, DR_OK \
	}

/* Add a finding (title printf-style); returns it, valid until the next add. */
struct dr_finding *dr_add(struct dr_report *r, const char *id, enum dr_severity sev,
                          const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void dr_evidence(struct dr_finding *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void dr_meaning(struct dr_finding *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void dr_action(struct dr_finding *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void dr_report_release(struct dr_report *r);

/*
 * Name paths as the machine does: every "<root>/" in r's strings becomes
 * "/" (for a report on a tree under --root). root "/" changes nothing.
 */
void dr_report_unroot(struct dr_report *r, const char *root);

/* The worst severity in r (DR_OK when empty). */
enum dr_severity dr_worst(const struct dr_report *r);

/* "ok", "info", "warning", "error" */
const char *dr_severity_key(enum dr_severity s);

/*
 * Exit status for r: 0 nothing worse than info, 1 a warning, 2 an error; with
 * r->fail_on DR_ERROR, 0 for warnings too.
 */
int dr_exit_code(const struct dr_report *r);

/*
 * Take out of r every finding that pattern names: an id, or a prefix ending in
 * ".*" ("health.fan.*"). Returns how many went.
 */
size_t dr_report_drop(struct dr_report *r, const char *pattern);

/* Whether pattern (as for dr_report_drop) names at least one id of the catalog. */
bool dr_catalog_matches(const char *pattern);

/*
 * The report for people: findings worst first (in the order found within a
 * severity), each with evidence, meaning and action; ok findings one line
 * each at the end; then a one-line summary. colour: ANSI colours.
 */
void dr_text(struct strbuf *sb, const struct dr_report *r, bool colour);

/* The report as one JSON document, schema "gpuscope.doctor/1". */
#define DR_JSON_SCHEMA "gpuscope.doctor/1"
void dr_json(struct strbuf *sb, const struct dr_report *r, double time);
/* One finding's members ("id":...,"action":...), without the braces: for the documents of
   other schemas that list findings (live.c). */
void dr_json_finding(struct strbuf *sb, const struct dr_finding *f);

/* The long explanation of a finding id. */
struct dr_explain {
	const char *id;
	const char *title; /* what the finding is about */
	const char *text;  /* paragraphs: causes, how to tell them apart, what to do */
};

/* The catalog entry of id, or NULL. */
const struct dr_explain *dr_explain_find(const char *id);

/* What a check may read. */
struct gpu_snapshot;
struct nvml_probe;

/*
 * Samples over time, oldest first: a live window (doctor --watch SEC) or a
 * stretch of a recording (doctor --recording FILE --since TIME). Each
 * sample holds the GPUs and their processes.
 */
struct dr_window {
	const struct gpu_snapshot *s;
	size_t nr;
	double interval;    /* seconds between samples, as asked (live) or typical (recorded) */
	const char *source; /* "live", or the recording's path */
};

struct dr_ctx {
	const struct gs_config *cfg;     /* roots: cfg->root stands for / (/dev, /etc, /usr, ...),
	                                    cfg->sysfs_root for /sys, cfg->proc_root for /proc */
	const struct gpu_snapshot *snap; /* the GPUs found, or NULL when none could be read */
	const char *(*getenv)(const char *name); /* the environment (getenv, or a test's) */
	const struct nvml_probe *nvml;           /* how libnvidia-ml loaded and answered, or NULL */
	const char *klog;     /* the kernel log, one message per line, or NULL when unread */
	const char *klog_why; /* why klog is NULL ("permission denied: ..."), or NULL */
	/* who runs doctor (device-node access) */
	unsigned uid, gid;
	const unsigned *groups; /* supplementary group ids */
	size_t nr_groups;
	/* samples over time, or NULL (then snap is the only sample); snap is the last */
	const struct dr_window *window;
	bool recorded;           /* the samples come from a recording: not this machine now */
	const char *klog_source; /* where klog was read ("/dev/kmsg", a --log file) */
	bool klog_foreign;       /* klog is a --log file, maybe of another machine: judged without
	                            this machine's PCI topology */
};

/* cfg->root joined with an absolute path ("/dev/kfd") into buf; returns buf. */
const char *dr_path(const struct dr_ctx *ctx, char *buf, size_t size, const char *abs);

/*
 * Read the kernel log for doctor: /dev/kmsg under cfg->root (each record's
 * "pri,seq,time,flags;" prefix taken off; a plain text file, as a fixture
 * holds, is read as it is), the newest max bytes at most. Returns 0, or -1
 * with why set ("permission denied (kernel.dmesg_restrict = 1)", ...).
 */
struct strbuf;
int dr_klog_read(const struct gs_config *cfg, struct strbuf *out, size_t max, char *why,
                 size_t why_size);

/*
 * The kernel log through the journal, for a user who may read it there but
 * not /dev/kmsg (kernel.dmesg_restrict, and a member of systemd-journal or
 * adm): runs 'journalctl --dmesg --boot --output=short-monotonic' (found on
 * PATH; nothing else is ever executed), its output capped at max bytes and
 * its run at a few seconds. Only on the real machine (cfg->root "/").
 * Returns 0, or -1 with why set.
 */
int dr_klog_journal(const struct gs_config *cfg, struct strbuf *out, size_t max, char *why,
                    size_t why_size);

/* --- checks ------------------------------------------------------------------ */

/* setup.pci.*: each display-class PCI device and the kernel driver bound to it. */
void dr_check_pci(const struct dr_ctx *ctx, struct dr_report *r);

/*
 * setup.cuda.visible_devices*, setup.cuda.device_order: CUDA_VISIBLE_DEVICES
 * hiding every GPU or naming one that does not exist; CUDA's device order
 * differing from nvidia-smi's on a machine with different GPUs.
 */
void dr_check_cuda_env(const struct dr_ctx *ctx, struct dr_report *r);

/*
 * setup.nvidia.*: the kernel module against the library, NVML's answer,
 * persistence mode, compute mode, MIG; Secure Boot refusing the module.
 */
void dr_check_nvidia(const struct dr_ctx *ctx, struct dr_report *r);

/* setup.cuda.toolkit*: CUDA toolkits installed (nvcc, libcudart) against the driver. */
void dr_check_cuda_toolkit(const struct dr_ctx *ctx, struct dr_report *r);

/*
 * setup.python.*, setup.torch.*, setup.tensorflow.*, setup.jax.*, setup.cupy.*:
 * the frameworks of the Python environments in use, found without running Python.
 */
void dr_check_python(const struct dr_ctx *ctx, struct dr_report *r);

/* setup.dev.*, setup.container.*: device nodes this user can open; containers. */
void dr_check_devices(const struct dr_ctx *ctx, struct dr_report *r);

/* setup.render.*, setup.video.*: rendering (VMs, software renderers, PRIME) and video engines. */
void dr_check_render(const struct dr_ctx *ctx, struct dr_report *r);
void dr_check_video(const struct dr_ctx *ctx, struct dr_report *r);

/*
 * health.*: hardware health from the samples (throttling, temperatures,
 * fans, power limits, PCIe link under load and its replays, ECC, retired
 * pages, row remapping, lost GPUs, AMD RAS and throttle status, Intel
 * throttle reasons, a low performance state under load).
 */
void dr_check_health(const struct dr_ctx *ctx, struct dr_report *r);

/*
 * log.*: the kernel log (NVIDIA Xid and driver messages, AMD and Intel GPU
 * errors, PCIe AER), repeats counted once, secondary errors pointed at
 * their cause.
 */
void dr_check_klog(const struct dr_ctx *ctx, struct dr_report *r);

/*
 * health.bench.*: GPUs whose figures measured by gpuscope bench (core/benchstore.h)
 * are far below their model's (memory bandwidth, compute, PCIe copies).
 */
void dr_check_bench(const struct dr_ctx *ctx, struct dr_report *r);

/* workload.*: patterns over a window of samples (starved GPUs, idle holders, leaks, miners). */
void dr_check_workload(const struct dr_ctx *ctx, struct dr_report *r);

/* The checks in the order doctor runs them. */
struct dr_check {
	const char *name; /* "pci", "nvidia", ... */
	void (*run)(const struct dr_ctx *ctx, struct dr_report *r);
	bool setup; /* about this machine's set-up: not run on a recording */
};
extern const struct dr_check dr_checks[];

/*
 * The explanations, one array per check file, each ended by { NULL }; the
 * catalog is their union (ids unique across them).
 */
extern const struct dr_explain dr_catalog_core[], dr_catalog_nvidia[], dr_catalog_toolkit[],
        dr_catalog_python[], dr_catalog_devices[], dr_catalog_render[], dr_catalog_health[],
        dr_catalog_klog[], dr_catalog_klog_drm[], dr_catalog_klog_aer[], dr_catalog_workload[],
        dr_catalog_bench[];

/* Every entry, sorted by id, into out (up to max); returns how many there are. */
size_t dr_catalog_list(const struct dr_explain **out, size_t max);

#endif
