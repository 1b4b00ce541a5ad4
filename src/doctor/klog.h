/*
 * Kernel-log lines for doctor: a fast line splitter that knows the
 * formats a log comes in (dmesg, dmesg -T, the journal and syslog, kmsg
 * records, nvidia-bug-report's copies of them, or bare messages), and a
 * table of events that turns a storm of repeats into one entry with a
 * count and the first and last time.
 */
#ifndef GPUSCOPE_KLOG_H
#define GPUSCOPE_KLOG_H

#include <stdbool.h>
#include <stddef.h>

struct strbuf;

enum klog_clock {
	KLOG_NONE = 0, /* the line has no time */
	KLOG_BOOT,     /* seconds since boot: "[   12.345678] " */
	KLOG_WALL,     /* seconds since the epoch (UTC): syslog, journal, dmesg -T */
};

struct klog_line {
	const char *msg; /* the message, after the time, host and "kernel:" (not NUL-terminated) */
	size_t len;
	double t; /* see clock */
	enum klog_clock clock;
	size_t lineno; /* 1-based */
};

/*
 * The next line of text[0..len) at *pos into *out, its time parsed and its
 * prefix taken off; advances *pos. Returns false at the end. Lines of a
 * syslog or journal that come from another program than the kernel are
 * still returned (msg after "prog[pid]: "); decoders match on the message.
 * year: for syslog stamps that have none ("Nov 30 10:00:00"), 0 for the
 * current year.
 */
bool klog_next(const char *text, size_t len, size_t *pos, struct klog_line *out, int year);

/* Does l's message contain s? (memmem on the message) */
bool klog_has(const struct klog_line *l, const char *s);

/* "[   12.345678]", "2026-11-30 10:00:00 UTC" or "line 12" for l, into buf. */
const char *klog_when(const struct klog_line *l, char *buf, size_t size);

/* --- events: repeats counted once -------------------------------------------------- */

struct klog_event {
	char *key;        /* owned: what makes two lines the same event ("xid 79 0000:3b:00.0") */
	const void *kind; /* the decoder's description of it (static) */
	unsigned long count;
	struct klog_line first, last; /* msg points into the log text: valid while it is */
	char *detail; /* owned: decoder's notes (the first line's fields), or NULL */
	size_t order; /* order of first appearance */
};

struct klog_events {
	struct klog_event *v;
	size_t nr, alloc;
	/* a small open-addressing index of v by key */
	size_t *slot;
	size_t nr_slot;
};

#define KLOG_EVENTS_INIT            \
	{                           \
		NULL, 0, 0, NULL, 0 \
	}

/*
 * Count one line as an event of key (printf-style); returns the event
 * (valid until the next add), with count 1 when it is new.
 */
struct klog_event *klog_event_add(struct klog_events *ev, const void *kind,
                                  const struct klog_line *l, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
/*
 * The event of kind whose key is fmt's (printf-style), or NULL: a look-up
 * in the index, so that a report relating events (a cause on the same GPU)
 * costs the same however many there are.
 */
const struct klog_event *klog_event_find(const struct klog_events *ev, const void *kind,
                                         const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
void klog_events_release(struct klog_events *ev);

/* --- the decoders (klog_*.c), driven by dr_check_klog() over each line once ------------ */

struct dr_ctx;
struct dr_report;

/*
 * Each decoder looks at one line and, when the line is one of its own,
 * counts it in ev (with its own static kind pointers) and returns true.
 * After the last line, its report function turns its events into findings
 * (ids log.<family>.*), reading the PCI topology through ctx when it needs
 * to (which device a bus id is, the GPU's upstream port).
 */
bool klog_nvidia_line(const struct klog_line *l, struct klog_events *ev); /* klog_nvidia.c */
void klog_nvidia_report(const struct dr_ctx *ctx, const struct klog_events *ev,
                        struct dr_report *r);
bool klog_drm_line(const struct klog_line *l,
                   struct klog_events *ev); /* klog_drm.c: amdgpu, i915, xe */
void klog_drm_report(const struct dr_ctx *ctx, const struct klog_events *ev, struct dr_report *r);
bool klog_aer_line(const struct klog_line *l, struct klog_events *ev); /* klog_aer.c: PCIe AER */
void klog_aer_report(const struct dr_ctx *ctx, const struct klog_events *ev, struct dr_report *r);

/*
 * klog_msg.c: the user-space and driver messages of data/messages/<family>.tsv (nvidia-smi,
 * the container toolkit, installers, CUDA, NCCL, the frameworks, ROCm, Level Zero, OpenCL,
 * graphics APIs). klog_msg_line() counts a line that matches a table row (it reads every
 * line, the kernel decoders' too); klog_msg_report() runs after the kernel decoders'
 * reports, since a row's "after" ids are looked up in r.
 */
bool klog_msg_line(const struct klog_line *l, struct klog_events *ev);
void klog_msg_report(const struct dr_ctx *ctx, const struct klog_events *ev, struct dr_report *r);

/* One row of a table, its cells as written (data/messages/README.md has the format). */
struct klog_msg_row {
	const char *id, *severity, *pattern, *meaning, *causes, *actions, *see, *after, *example,
	        *source;
	const char *file; /* "data/messages/cuda.tsv" */
	size_t line;      /* 1-based, in file */
};

/* Row i of all the tables (in file order), or NULL past the last. Parsed once, on first use. */
const struct klog_msg_row *klog_msg_row(size_t i);
/*
 * The row that matches msg[0..len), or NULL: of several, the one with the most literal
 * text (the first in table order of equals). naive: try every row on the line instead of
 * the anchor index (the tests compare the two). caps (may be NULL): the captures as
 * "name=value" lines.
 */
const struct klog_msg_row *klog_msg_match(const char *msg, size_t len, bool naive,
                                          struct strbuf *caps);
/*
 * Every problem of the tables, one line each ("data/messages/x.tsv:12: ..."), into out:
 * cells, severity, id, pattern, example (it must match its row and give its id), see and
 * after ids that exist. Returns how many.
 */
size_t klog_msg_check(struct strbuf *out);
/*
 * The tables' ids as catalog entries (title and text built from their rows), sorted by id,
 * built once; *out is valid for the life of the program. Returns how many.
 */
struct dr_explain;
size_t klog_msg_catalog(const struct dr_explain **out);

/* --- NVIDIA's Xid catalog (data/nvidia/xid.tsv, built in) ------------------------------ */

struct nv_xid {
	int code;
	const char *mnemonic;  /* "ROBUST_CHANNEL_GPU_ECC_DBE" */
	const char *severity;  /* "error", "warning" or "info" */
	const char *meaning;   /* one line */
	const char *causes;    /* most likely first, separated by " | " */
	const char *immediate; /* what to do now */
	const char *followup;  /* what to do if it recurs */
	const char *source;
};

/* The row of code, or NULL when the catalog has none. Parsed once, on first use. */
const struct nv_xid *klog_nvidia_xid(int code);
/* Every row, in code order, into *out; returns how many. */
size_t klog_nvidia_xids(const struct nv_xid **out);

#endif
