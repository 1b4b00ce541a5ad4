/*
 * The feed of a recording (gpuscope replay): samples read back from a
 * flight-recorder file, paced as they were recorded times a speed factor,
 * and restricted to the GPUs the user named.
 */
#include "record/replay.h"

#include <stdlib.h>
#include <string.h>

#include "backend/feed.h"
#include "backend/feed_impl.h"
#include "core/clock.h"
#include "core/err.h"
#include "core/gpu.h"
#include "core/xalloc.h"
#include "record/record.h"

/* What a replay keeps behind the feed's source. */
struct replay {
	struct rec_reader *r;
	char *ids;
	double speed;
	double rec_t0, mono_t0; /* the first replayed sample: its time, and when it was shown */
};

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
	struct replay *rp = f->source;
	int rc = rec_reader_next(rp->r, snap, err);

	if (rc < 0)
		return rc;
	if (rc == 0)
		return FEED_END;
	if (rp->speed > 0) {
		if (!f->started) {
			rp->rec_t0 = snap->time;
			rp->mono_t0 = clock_mono();
		} else if (snap->time > rp->rec_t0) {
			feed_wait_until(f, rp->mono_t0 + (snap->time - rp->rec_t0) / rp->speed);
		}
	}
	f->started = true;
	return select_devices(snap, rp->ids, err);
}

static void
release_replay(struct feed *f)
{
	struct replay *rp = f->source;

	if (rp->r)
		rec_reader_close(rp->r);
	free(rp->ids);
	free(rp);
	f->source = NULL;
}

int
feed_open_replay(const char *path, const char *ids, double speed, double from, struct feed **out,
                 struct err *err)
{
	struct feed *f = feed_alloc(1.0);
	struct replay *rp = xcalloc(1, sizeof(*rp));
	struct gpu_snapshot first;
	int rc;

	*out = NULL;
	f->next = next_replay;
	f->release = release_replay;
	f->source = rp;
	f->replay = true;
	rp->speed = speed > 0 ? speed : 0;
	rp->ids = ids && *ids ? xstrdup(ids) : NULL;
	rc = rec_reader_open(path, &rp->r, err);
	if (rc < 0)
		goto fail;
	rec_reader_warn(rp->r);
	/* the ids must name GPUs of the recording: check them on its first sample */
	gpu_snapshot_init(&first);
	rc = rec_reader_next(rp->r, &first, err);
	if (rc == 0)
		rc = err_set(err, E_NOTFOUND, "'%s' holds no sample yet", path);
	else if (rc > 0)
		rc = select_devices(&first, rp->ids, err);
	gpu_snapshot_release(&first);
	if (rc < 0)
		goto fail;
	rc = rec_reader_seek(rp->r, from, err);
	if (rc < 0)
		goto fail;
	*out = f;
	return 0;
fail:
	feed_close(f);
	return rc;
}
