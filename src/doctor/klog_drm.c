/* PLACEHOLDER: to be written (issue 6). */
#include "doctor.h"
#include "klog.h"

const struct dr_explain dr_catalog_klog_drm[] = {
	{ NULL, NULL, NULL },
};

bool
klog_drm_line(const struct klog_line *l, struct klog_events *ev)
{
	(void)l;
	(void)ev;
	return false;
}

void
klog_drm_report(const struct dr_ctx *ctx, const struct klog_events *ev, struct dr_report *r)
{
	(void)ctx;
	(void)ev;
	(void)r;
}

bool
klog_aer_line(const struct klog_line *l, struct klog_events *ev)
{
	(void)l;
	(void)ev;
	return false;
}

void
klog_aer_report(const struct dr_ctx *ctx, const struct klog_events *ev, struct dr_report *r)
{
	(void)ctx;
	(void)ev;
	(void)r;
}
