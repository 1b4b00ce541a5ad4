/* PLACEHOLDER: to be written (issue 5). */
#include "doctor.h"

#include <stddef.h>

const struct dr_explain dr_catalog_toolkit[] = {
	{ NULL, NULL, NULL },
};

void
dr_check_cuda_toolkit(const struct dr_ctx *ctx, struct dr_report *r)
{
	(void)ctx;
	(void)r;
}

