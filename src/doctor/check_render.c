/* PLACEHOLDER: to be written (issue 5). */
#include "doctor.h"

#include <stddef.h>

const struct dr_explain dr_catalog_render[] = {
	{ NULL, NULL, NULL },
};

void
dr_check_render(const struct dr_ctx *ctx, struct dr_report *r)
{
	(void)ctx;
	(void)r;
}

void
dr_check_video(const struct dr_ctx *ctx, struct dr_report *r)
{
	(void)ctx;
	(void)r;
}

