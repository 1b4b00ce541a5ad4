/* PLACEHOLDER: to be written (issue 6). */
#include "klog.h"

bool
klog_nvidia_line(const struct klog_line *l, struct klog_events *ev)
{
	(void)l;
	(void)ev;
	return false;
}

void
klog_nvidia_report(const struct dr_ctx *ctx, const struct klog_events *ev, struct dr_report *r)
{
	(void)ctx;
	(void)ev;
	(void)r;
}
