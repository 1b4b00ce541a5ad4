/*
 * The feed of a recording (gpuscope replay): samples read back from a
 * flight-recorder file, paced as they were recorded times a speed factor,
 * and restricted to the GPUs the user named.
 */
#include "backend/feed_impl.h"

#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/err.h"
#include "core/gpu.h"
#include "core/record.h"
#include "core/xalloc.h"

/* Keep only the devices ids names, and their processes; E_USAGE for an id that names none. */
static int
select_devices(struct gpu_snapshot *s, const char *ids, struct err *err)
{
	bool *keep;
	unsigned *to;
	size_t nd = 0, np = 0;
	int rc;

	if (!ids || !*ids || !s->nr_dev)
		return 0;
	keep = xcalloc(s->nr_dev, sizeof(*keep));
	to = xcalloc(s->nr_dev, sizeof(*to));
	rc = gpu_select(s->dev, s->nr_dev, ids, keep, err);
	if (rc < 0)
		goto out;
	for (size_t i = 0; i < s->nr_dev; i++) {
		if (!keep[i])
			continue;
		to[i] = (unsigned)nd;
		s->dev[nd++] = s->dev[i];
	}
	for (size_t i = 0; i < s->nr_proc; i++) {
		struct gpu_proc *p = &s->proc[i];

		if (p->dev >= s->nr_dev || !keep[p->dev]) {
			gpu_proc_release(p);
			continue;
		}
		p->dev = to[p->dev];
		s->proc[np++] = *p;
	}
	s->nr_dev = nd;
	s->nr_proc = np;
out:
	free(keep);
	free(to);
	return rc;
}

static int
next_replay(struct feed *f, struct gpu_snapshot *snap, struct err *err)
{
	int rc = rec_reader_next(f->r, snap, err);

	if (rc < 0)
		return rc;
	if (rc == 0)
		return FEED_END;
	if (f->speed > 0) {
		if (!f->started) {
			f->rec_t0 = snap->time;
			f->mono_t0 = clock_mono();
		} else if (snap->time > f->rec_t0) {
			feed_wait_until(f, f->mono_t0 + (snap->time - f->rec_t0) / f->speed);
		}
	}
	f->started = true;
	return select_devices(snap, f->ids, err);
}

static void
release_replay(struct feed *f)
{
	if (f->r)
		rec_reader_close(f->r);
	free(f->ids);
}

int
feed_open_replay(const char *path, const char *ids, double speed, double from, struct feed **out,
                 struct err *err)
{
	struct feed *f = feed_alloc(1.0);
	struct gpu_snapshot first;
	int rc;

	*out = NULL;
	f->next = next_replay;
	f->release = release_replay;
	f->speed = speed > 0 ? speed : 0;
	f->ids = ids && *ids ? xstrdup(ids) : NULL;
	rc = rec_reader_open(path, &f->r, err);
	if (rc < 0)
		goto fail;
	/* the ids must name GPUs of the recording: check them on its first sample */
	gpu_snapshot_init(&first);
	rc = rec_reader_next(f->r, &first, err);
	if (rc == 0)
		rc = err_set(err, E_NOTFOUND, "'%s' holds no sample yet", path);
	else if (rc > 0)
		rc = select_devices(&first, f->ids, err);
	gpu_snapshot_release(&first);
	if (rc < 0)
		goto fail;
	rc = rec_reader_seek(f->r, from, err);
	if (rc < 0)
		goto fail;
	*out = f;
	return 0;
fail:
	feed_close(f);
	return rc;
}
