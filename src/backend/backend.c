/*
 * The backend registry and the wrappers around backend_ops: the one place
 * that checks preconditions and turns a missing optional method into
 * E_NOTSUP.
 */
#include "backend/backend.h"

#include <assert.h>
#include <stddef.h>

#include "core/err.h"

const struct backend_ops *const backend_list[] = {
	&backend_nvml,
	&backend_drm,
	NULL,
};

int
backend_open(const struct backend_ops *ops, const struct gs_config *cfg, struct backend **out,
             struct err *err)
{
	int rc;

	assert(ops && ops->open && out);
	*out = NULL;
	rc = ops->open(cfg, out, err);
	if (rc < 0)
		return rc;
	assert(*out);
	(*out)->ops = ops;
	return 0;
}

int
backend_scan(struct backend *be, struct gpu_snapshot *snap, struct err *err)
{
	assert(be && snap);
	if (!be->ops->scan)
		return err_set(err, E_NOTSUP, "%s: cannot list devices", be->ops->name);
	return be->ops->scan(be, snap, err);
}

int
backend_begin_sample(struct backend *be, double now, struct err *err)
{
	assert(be);
	return be->ops->begin_sample ? be->ops->begin_sample(be, now, err) : 0;
}

bool
backend_wants_window(struct backend *be)
{
	assert(be);
	return be->ops->wants_window && be->ops->wants_window(be);
}

int
backend_read_device(struct backend *be, struct gpu_device *dev, struct err *err)
{
	assert(be && dev);
	if (!be->ops->read_device)
		return E_NOTSUP;
	return be->ops->read_device(be, dev, err);
}

int
backend_read_procs(struct backend *be, const struct gpu_device *dev, double now,
                   struct gpu_snapshot *out, struct err *err)
{
	assert(be && dev && out);
	if (!be->ops->read_procs)
		return E_NOTSUP;
	return be->ops->read_procs(be, dev, now, out, err);
}

void
backend_add_notes(struct backend *be, struct gpu_snapshot *snap)
{
	assert(be && snap);
	if (be->ops->add_notes)
		be->ops->add_notes(be, snap);
}

int
backend_topology(struct backend *be, const struct gpu_device *a, const struct gpu_device *b,
                 int *level)
{
	assert(be && a && b && level);
	if (!be->ops->topology)
		return E_NOTSUP;
	return be->ops->topology(be, a, b, level);
}

void
backend_close(struct backend *be)
{
	if (be && be->ops->close)
		be->ops->close(be);
}
