/* PLACEHOLDER: to be written (issue 7). */
#include "models.h"

#include <math.h>

size_t
model_catalog(const struct model_cfg **out)
{
	*out = NULL;
	return 0;
}

int
model_lookup(const char *name, struct model_cfg *out, struct err *err)
{
	(void)name;
	(void)out;
	(void)err;
	return -1;
}

int
model_from_config(const char *path, struct model_cfg *out, struct err *err)
{
	(void)path;
	(void)out;
	(void)err;
	return -1;
}

int
model_from_size(const char *s, struct model_cfg *out, struct err *err)
{
	(void)s;
	(void)out;
	(void)err;
	return -1;
}

int
model_resolve(const char *arg, struct model_cfg *out, struct err *err)
{
	(void)arg;
	(void)out;
	(void)err;
	return -1;
}

double
model_params(const struct model_cfg *m)
{
	(void)m;
	return NAN;
}

double
model_active_params(const struct model_cfg *m)
{
	(void)m;
	return NAN;
}

double
model_kv_bytes_per_token(const struct model_cfg *m, double bytes_per_value)
{
	(void)m;
	(void)bytes_per_value;
	return NAN;
}
