/*
 * The pieces that the kernel-log decoders of the in-tree drivers
 * (klog_drm.c) and of PCIe AER (klog_aer.c) share: reading a line's device
 * prefix and fields, the "a|b|c" event keys, and the quoting and counting
 * that their findings use. Internal to doctor/.
 */
#ifndef GPUSCOPE_KLOG_DEC_H
#define GPUSCOPE_KLOG_DEC_H

#include <stdbool.h>
#include <stddef.h>

struct dr_finding;
struct klog_event;
struct klog_events;
struct klog_line;

/* "driver 0000:3b:00.0: rest": the driver and bus id of a line's device. */
struct klog_pfx {
	char drv[32];
	char bdf[16];     /* "" when the line names no device */
	const char *rest; /* after "bdf: ", "AER: ", "amdgpu: ", "[drm] " */
	const char *end;
};

/* Is p (before end) a bus id "0000:3b:00.0" (12 characters)? */
bool klog_is_bdf(const char *p, const char *end);

/* The driver, bus id and rest of l's message into *p (drv and bdf "" when it names none). */
void klog_prefix(const struct klog_line *l, struct klog_pfx *p);

/* Where s first stands in l's message, or NULL. */
const char *klog_find(const struct klog_line *l, const char *s);
/* Where s first stands in [p, end), or NULL: memmem() made fast for short haystacks. */
const char *klog_search(const char *p, const char *end, const char *s);

/* Copy p up to end or the first character of stops into out ("" when none), cut to size. */
void klog_take(char *out, size_t size, const char *p, const char *end, const char *stops);

/* Field n (0-based) of a "a|b|c" key into out ("" when there is none); returns out. */
const char *klog_field(const char *key, int n, char *out, size_t size);

/* Same device: equal bus ids, or one of them unknown ("?"). */
bool klog_same_dev(const char *a, const char *b);

/* Set e's detail to what and a when it has none, or append "; what a" to it. */
void klog_add_detail(struct klog_event *e, const char *what, const char *a);

/* Add a sentence to f's meaning (dr_meaning() replaces it). */
void klog_mean(struct dr_finding *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Quote l as evidence of f: "[  12.345678] message", cut at 300 characters. */
void klog_quote(struct dr_finding *f, const struct klog_line *l);

/* "once" or "N times" into buf; returns buf. */
const char *klog_times(unsigned long n, char *buf, size_t size);

/*
 * How many lines the events of kind on device bdf (any, when bdf is "?")
 * count in all; *first (when first is not NULL) the earliest of them, or NULL.
 */
unsigned long klog_count_on(const struct klog_events *ev, const void *kind, const char *bdf,
                            const struct klog_event **first);

#endif
