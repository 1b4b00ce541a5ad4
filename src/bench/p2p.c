/*
 * GPU to GPU copies (bench/p2p.h): nvbandwidth's device_to_device copy-engine
 * method over dev.h's peer operations. Each pair's four buffers are made
 * and filled once; each test is 3 samples of 4 warm-up copies, then a spin
 * kernel holding the source's stream while a marker, 16 copies and a marker
 * queue behind it, so that the enqueue is not timed. The copy lands where
 * it should: three places of the destination are read back and compared.
 */
#include "bench/p2p.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/dev.h"
#include "core/clock.h"
#include "core/err.h"
#include "core/xalloc.h"

#define MIB (1024ull * 1024)

#define WARMUP  4
#define LOOPS   16
#define SAMPLES 3
#define CHECK   4096 /* bytes compared at each of three places */

/* a test stopped by opts->stop: not an error */
#define STOPPED 1

/* a pair's tests, in run order */
enum kind { K_FWD, K_REV, K_BIDIR };

/* one device's side of a pair */
struct side {
	struct bench_dev *d;
	size_t i;      /* in devs */
	uint64_t src;  /* what it sends */
	uint64_t dst;  /* what it receives */
	uint64_t seed; /* src's contents */
	void *flag;    /* its spin kernel's mapped flag, or NULL */
	bool spin;
};

struct run {
	struct bench_devs *devs;
	const struct bench_p2p_opts *o;
	bool *lost;
	char (*why)[200];       /* each lost device's cause */
	struct bench_pace pace; /* stop and progress; its test names the buffer below */
	char test[64];
};

static bool
want_stop(struct run *r)
{
	return bench_pace_stop(&r->pace);
}

static void
progress(struct run *r, double done)
{
	bench_pace_progress(&r->pace, done);
}

static bool
is_lost(int rc)
{
	return rc == E_LOST || rc == E_TIMEOUT;
}

static void
set_lost(struct run *r, size_t i, const char *why)
{
	if (r->lost[i])
		return;
	r->lost[i] = true;
	snprintf(r->why[i], sizeof(r->why[i]), "%.190s", why && *why ? why : "device lost");
}

/*
 * After E_LOST or E_TIMEOUT from a call that involved both of a pair: ask
 * each (a dead device answers at once) which one it was; the call's own
 * device when neither says.
 */
static void
blame(struct run *r, struct side *own, struct side *other, const struct err *e)
{
	struct side *s[2] = { own, other };
	bool any = false;

	for (int k = 0; k < 2; k++) {
		struct err pe = ERR_INIT;
		unsigned long long f, t;

		if (r->lost[s[k]->i])
			continue;
		if (is_lost(s[k]->d->ops->mem_info(s[k]->d, &f, &t, &pe))) {
			set_lost(r, s[k]->i, pe.msg);
			any = true;
		}
	}
	if (!any)
		set_lost(r, own->i, e->msg);
}

static int
cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
median(double *v, size_t n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double
highest(const double *v, size_t n)
{
	double b = 0;

	for (size_t i = 0; i < n; i++)
		if (v[i] > b)
			b = v[i];
	return b;
}

/* xorshift64 words from seed and the byte offset: random contents defeat compression */
static void
pattern(uint64_t seed, uint64_t off, void *p, size_t bytes)
{
	uint64_t x = (seed ^ (off / MIB + 1) * 0x9e3779b97f4a7c15ull) | 1, w;
	unsigned char *c = p;

	for (size_t i = 0; i < bytes; i += sizeof(w)) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		w = x;
		memcpy(c + i, &w, bytes - i < sizeof(w) ? bytes - i : sizeof(w));
	}
}

/* fill s's src (bytes, a whole number of MiB) with its pattern, a MiB at a time */
static int
fill(struct side *s, size_t bytes, unsigned char *chunk, struct err *err)
{
	for (size_t off = 0; off < bytes; off += MIB) {
		int rc;

		pattern(s->seed, off, chunk, MIB);
		rc = s->d->ops->write(s->d, 0, s->src, off, chunk, MIB, true, err);
		if (rc)
			return rc;
	}
	return 0;
}

/*
 * Compare three places of to's dst (its start, middle and end) with from's
 * pattern: *bad, with err saying where, when they differ.
 */
static int
verify(struct side *from, struct side *to, size_t bytes, unsigned char *chunk, bool *bad,
       struct err *err)
{
	uint64_t at[3] = { 0, bytes / 2 / MIB * MIB + MIB / 2, bytes - CHECK };
	unsigned char got[CHECK];

	*bad = false;
	for (int k = 0; k < 3; k++) {
		uint64_t block = at[k] / MIB * MIB;
		int rc = to->d->ops->read(to->d, 0, to->dst, at[k], got, CHECK, true, err);

		if (rc)
			return rc;
		pattern(from->seed, block, chunk, MIB);
		if (memcmp(got, chunk + (at[k] - block), CHECK)) {
			err_set(err, E_IO,
			        "the copy's bytes at offset %llu of %s differ from what %s sent",
			        (unsigned long long)at[k], to->d->info.id, from->d->info.id);
			*bad = true;
			return 0;
		}
	}
	return 0;
}

/* queue one copy from s to t on s's stream 0 */
static int
copy_one(struct side *s, struct side *t, size_t bytes, struct err *err)
{
	return s->d->ops->peer_copy(s->d, 0, t->d, t->dst, s->src, bytes, err);
}

/*
 * One sample of the directions from[i] to to[i] (1 or 2 at once), each on
 * its source's stream 0: *failed is the side whose call failed. secs[i]:
 * direction i's seconds on its source's clock.
 */
static int
sample(struct run *r, struct side **from, struct side **to, int nd, size_t bytes, double secs[2],
       int *failed, struct err *err)
{
	uint64_t spin_ns;
	int rc = 0, i;

	for (int w = 0; w < WARMUP; w++)
		for (i = 0; i < nd; i++)
			if ((rc = copy_one(from[i], to[i], bytes, err))) {
				*failed = i;
				return rc;
			}
	for (i = 0; i < nd; i++)
		if ((rc = from[i]->d->ops->sync(from[i]->d, 0, err))) {
			*failed = i;
			return rc;
		}
	for (i = 0; i < nd; i++) {
		struct bench_dev *d = from[i]->d;

		*failed = i;
		if (from[i]->flag) {
			unsigned one[2] = { 1, 1 };
			struct bench_arg a[2];

			*(volatile int32_t *)from[i]->flag = 0;
			spin_ns =
			        (uint64_t)((d->timeout_s > 0 && d->timeout_s < 20 ? d->timeout_s / 2
			                                                          : 10) *
			                   1e9);
			a[0] = bench_arg_host(from[i]->flag);
			a[1] = bench_arg_u64(spin_ns);
			if ((rc = d->ops->launch(d, 0, BK_SPIN, one, one, a, 2, err)))
				goto release;
		}
		if ((rc = d->ops->mark(d, 0, 0, err)))
			goto release;
	}
	for (int n = 0; n < LOOPS; n++) {
		if (want_stop(r)) {
			rc = STOPPED;
			goto release;
		}
		for (i = 0; i < nd; i++)
			if ((rc = copy_one(from[i], to[i], bytes, err))) {
				*failed = i;
				goto release;
			}
	}
	for (i = 0; i < nd; i++)
		if ((rc = from[i]->d->ops->mark(from[i]->d, 0, 1, err))) {
			*failed = i;
			goto release;
		}
release:
	/* every spin kernel let go before any wait, whatever failed */
	for (i = 0; i < nd; i++)
		if (from[i]->flag)
			__atomic_store_n((int32_t *)from[i]->flag, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < nd; i++) {
		int src = from[i]->d->ops->sync(from[i]->d, 0, rc ? NULL : err);

		if (!rc && src) {
			rc = src;
			*failed = i;
		}
	}
	if (rc)
		return rc;
	for (i = 0; i < nd; i++) {
		*failed = i;
		if ((rc = from[i]->d->ops->elapsed(from[i]->d, 0, 1, &secs[i], err)))
			return rc;
		if (secs[i] <= 0)
			return err_set(err, E_IO, "%s's markers gave %g s for %d copies",
			               from[i]->d->info.id, secs[i], LOOPS);
	}
	return 0;
}

static const char *
kind_name(enum kind k)
{
	return k == K_BIDIR ? "p2p.ce.bidir" : "p2p.ce";
}

/* Measure test k of the pair into res. */
static int
measure(struct run *r, struct side *a, struct side *b, enum kind k, size_t bytes,
        unsigned char *chunk, struct bench_p2p_result *res, struct err *err)
{
	struct side *from[2], *to[2];
	double rate[2][SAMPLES], sum[SAMPLES];
	int nd = k == K_BIDIR ? 2 : 1, failed = 0, rc = 0;
	unsigned n;
	bool spin = true, bad = false;

	from[0] = k == K_REV ? b : a;
	to[0] = k == K_REV ? a : b;
	from[1] = b;
	to[1] = a;
	for (int i = 0; i < nd; i++)
		spin &= from[i]->flag != NULL;
	for (n = 0; n < SAMPLES; n++) {
		double secs[2] = { 0, 0 };

		rc = sample(r, from, to, nd, bytes, secs, &failed, err);
		if (rc)
			goto fail;
		sum[n] = 0;
		for (int i = 0; i < nd; i++) {
			rate[i][n] = (double)bytes * LOOPS / secs[i] / 1e9;
			sum[n] += rate[i][n];
		}
		progress(r, (n + 1.0) / SAMPLES);
	}
	for (int i = 0; i < nd && !bad; i++) {
		failed = i;
		rc = verify(from[i], to[i], bytes, chunk, &bad, err);
		if (rc)
			goto fail;
	}
	if (bad) {
		res->status = BENCH_WRONG;
		snprintf(res->why, sizeof(res->why), "%s", err->msg);
	}
	res->samples = SAMPLES;
	res->bytes = bytes;
	res->count = (double)bytes * LOOPS * nd;
	if (k == K_BIDIR) {
		res->best = highest(sum, SAMPLES);
		res->median = median(sum, SAMPLES);
		res->fwd = median(rate[0], SAMPLES);
		res->rev = median(rate[1], SAMPLES);
	} else {
		res->best = highest(rate[0], SAMPLES);
		res->median = median(rate[0], SAMPLES);
	}
	snprintf(res->note, sizeof(res->note),
	         "%zu MiB x %d copies, median of %d, bytes counted once; cuMemcpyPeerAsync on "
	         "the source's stream%s%s",
	         (size_t)(bytes / MIB), LOOPS, SAMPLES,
	         k == K_BIDIR ? "; both at once, each timed on its source, summed" : "",
	         spin ? "" : "; no spin kernel: enqueue timed too");
	return 0;
fail:
	if (is_lost(rc))
		blame(r, from[failed], to[failed], err);
	return rc;
}

/* the link between a and b, from what is told */
static void
link_of(struct run *r, const struct bench_dev *a, const struct bench_dev *b,
        const struct bench_peer_info *pi, struct bench_p2p_result *res)
{
	res->rank = pi->rank;
	if (r->o->link &&
	    r->o->link(r->o->link_arg, &a->info, &b->info, res->link, sizeof(res->link)) == 1 &&
	    res->link[0]) {
		snprintf(res->link_from, sizeof(res->link_from), "the link callback");
	} else if (pi->atomics == 1) {
		/* PCIe peer access has no native atomics; NVLink's has */
		snprintf(res->link, sizeof(res->link), "NVLink");
		snprintf(res->link_from, sizeof(res->link_from),
		         "cuDeviceGetP2PAttribute: native peer atomics");
	} else if (pi->atomics == 0 && (pi->to || pi->from)) {
		snprintf(res->link, sizeof(res->link), "PCIe");
		snprintf(res->link_from, sizeof(res->link_from),
		         "cuDeviceGetP2PAttribute: peer access without native atomics");
	} else {
		snprintf(res->link, sizeof(res->link), "unknown");
		snprintf(res->link_from, sizeof(res->link_from), "the driver does not tell");
	}
}

static void
result_init(struct bench_p2p_result *res, const char *name, const struct side *s,
            const struct side *t, bool bidir)
{
	memset(res, 0, sizeof(*res));
	res->name = name;
	res->src = s->i;
	res->dst = t->i;
	snprintf(res->src_id, sizeof(res->src_id), "%s", s->d->info.id);
	snprintf(res->dst_id, sizeof(res->dst_id), "%s", t->d->info.id);
	res->bidir = bidir;
	res->status = BENCH_MEASURED;
	res->best = res->median = res->fwd = res->rev = NAN;
	res->rank = -1;
}

/* a test's seconds for the plan, at a rate links of the kind give */
static double
plan_seconds(bool nvlink, size_t bytes)
{
	return (double)bytes * (WARMUP + LOOPS) * SAMPLES / (nvlink ? 300e9 : 25e9) + 0.01;
}

/*
 * The buffer for devices with free bytes free_a and free_b: 512 MiB (quick
 * 64), each device holding two in half of its free memory and of
 * mem_limit; in whole MiB, 0 when not even one fits.
 */
static size_t
buffer_bytes(const struct run *r, unsigned long long free_a, unsigned long long free_b)
{
	unsigned long long want = (r->o->quick ? 64 : 512) * MIB;
	unsigned long long f = free_a < free_b ? free_a : free_b;

	if (f / 4 < want)
		want = f / 4;
	if (r->o->mem_limit && r->o->mem_limit / 2 < want)
		want = r->o->mem_limit / 2;
	return (size_t)(want / MIB * MIB);
}

static int
pair_bytes(struct run *r, struct side *a, struct side *b, size_t *bytes, struct err *err)
{
	struct side *s[2] = { a, b };
	unsigned long long f[2] = { 0, 0 }, t;

	for (int k = 0; k < 2; k++) {
		int rc = s[k]->d->ops->mem_info(s[k]->d, &f[k], &t, err);

		if (rc) {
			if (is_lost(rc))
				set_lost(r, s[k]->i, err->msg);
			return rc;
		}
	}
	*bytes = buffer_bytes(r, f[0], f[1]);
	if (*bytes < MIB)
		return err_set(err, E_BUSY, "not enough free memory on %s and %s for 1 MiB buffers",
		               a->d->info.id, b->d->info.id);
	return 0;
}

/* what pair_bytes() will give, for the plan (nothing asked beyond the free memory) */
static size_t
plan_bytes(const struct run *r, struct bench_dev *a, struct bench_dev *b)
{
	unsigned long long fa = 0, fb = 0, t;

	if (a->ops->mem_info(a, &fa, &t, NULL) || b->ops->mem_info(b, &fb, &t, NULL))
		return 0;
	return buffer_bytes(r, fa, fb);
}

static void
pair_free(struct side *s)
{
	struct bench_dev *d = s->d;

	if (s->src)
		d->ops->free(d, s->src);
	if (s->dst)
		d->ops->free(d, s->dst);
	if (s->flag)
		d->ops->host_free(d, s->flag);
	s->src = s->dst = 0;
	s->flag = NULL;
}

/* Make and fill the pair's buffers and flags. */
static int
pair_setup(struct run *r, struct side *a, struct side *b, size_t bytes, unsigned char *chunk,
           struct err *err)
{
	struct side *s[2] = { a, b };

	for (int k = 0; k < 2; k++) {
		struct bench_dev *d = s[k]->d;
		int rc;

		rc = d->ops->alloc(d, bytes, &s[k]->src, err);
		if (!rc)
			rc = d->ops->alloc(d, bytes, &s[k]->dst, err);
		if (!rc && s[k]->spin) {
			rc = d->ops->host_alloc(d, 4096, true, &s[k]->flag, err);
			if (!rc)
				memset(s[k]->flag, 0, 4096);
		}
		if (!rc)
			rc = fill(s[k], bytes, chunk, err);
		if (rc) {
			/* out of memory is a skip, as in the suite */
			if (rc == E_IO && strstr(err->msg, "OUT_OF_MEMORY"))
				rc = E_BUSY;
			if (is_lost(rc))
				set_lost(r, s[k]->i, err->msg);
			return rc;
		}
	}
	return 0;
}

/* the status and why of a test that returned rc with e */
static void
finish(struct bench_p2p_result *res, int rc, const struct err *e, double t0)
{
	res->seconds = clock_mono() - t0;
	if (rc == 0)
		return;
	res->best = res->median = res->fwd = res->rev = NAN;
	if (rc == STOPPED) {
		res->status = BENCH_STOPPED;
		snprintf(res->why, sizeof(res->why), "stopped");
		return;
	}
	res->status = rc == E_NOTSUP ? BENCH_UNSUPPORTED
	              : rc == E_BUSY ? BENCH_SKIPPED
	                             : BENCH_FAILED;
	snprintf(res->why, sizeof(res->why), "%s", e->msg[0] ? e->msg : status_str(rc));
}

struct pair {
	size_t a, b;
	struct bench_peer_info pi;
	int rc; /* peer_info's */
	char msg[256];
	double plan[3]; /* each test's planned seconds */
};

/* Run the pair's tests into res[0..2] (1 when neither reaches the other); how many. */
static size_t
run_pair(struct run *r, struct pair *p, struct bench_p2p_result *res, unsigned char *chunk)
{
	struct bench_dev **dev = r->devs->dev;
	struct side a = { .d = dev[p->a], .i = p->a, .seed = 0x2545f4914f6cdd1dull },
	            b = { .d = dev[p->b], .i = p->b, .seed = 0x9e3779b97f4a7c15ull };
	bool can[3] = { p->pi.to, p->pi.from, p->pi.to && p->pi.from };
	bool ready = false;
	int setup_rc = 0;
	struct err setup_e = ERR_INIT;
	size_t bytes = 0, nres;

	if (p->rc == 0 && !p->pi.to && !p->pi.from) {
		result_init(&res[0], "p2p", &a, &b, false);
		link_of(r, a.d, b.d, &p->pi, &res[0]);
		res[0].status = BENCH_UNSUPPORTED;
		snprintf(res[0].why, sizeof(res[0].why),
		         "no peer access between %s and %s either way (cuDeviceCanAccessPeer): "
		         "copies between them go through host memory, not measured here",
		         a.d->info.id, b.d->info.id);
		return 1;
	}
	a.spin = a.d->info.host_mapped && a.d->ops->has(a.d, BK_SPIN);
	b.spin = b.d->info.host_mapped && b.d->ops->has(b.d, BK_SPIN);
	nres = 3;
	for (int k = 0; k < 3; k++) {
		struct bench_p2p_result *x = &res[k];
		struct err e = ERR_INIT;
		double t0 = clock_mono();
		int rc;

		result_init(x, kind_name(k), k == K_REV ? &b : &a, k == K_REV ? &a : &b,
		            k == K_BIDIR);
		link_of(r, a.d, b.d, &p->pi, x);
		snprintf(r->test, sizeof(r->test), "p2p %s%s%s", x->src_id,
		         k == K_BIDIR ? "<>" : ">", x->dst_id);
		r->pace.cur_plan = p->plan[k];
		r->pace.plan_left -= r->pace.cur_plan;
		if (r->lost[p->a] || r->lost[p->b]) {
			size_t i = r->lost[p->a] ? p->a : p->b;

			x->status = BENCH_FAILED;
			snprintf(x->why, sizeof(x->why), "device lost: %s", r->why[i]);
			continue;
		}
		if (p->rc) {
			x->status = p->rc == E_NOTSUP ? BENCH_UNSUPPORTED : BENCH_FAILED;
			snprintf(x->why, sizeof(x->why), "%s", p->msg);
			continue;
		}
		if (want_stop(r)) {
			x->status = BENCH_STOPPED;
			snprintf(x->why, sizeof(x->why), "stopped before it ran");
			continue;
		}
		if (!can[k]) {
			x->status = BENCH_UNSUPPORTED;
			snprintf(x->why, sizeof(x->why),
			         "%s cannot reach %s's memory (cuDeviceCanAccessPeer: 0)",
			         k == K_BIDIR ? (p->pi.to ? b.d->info.id : a.d->info.id)
			                      : x->src_id,
			         k == K_BIDIR ? (p->pi.to ? a.d->info.id : b.d->info.id)
			                      : x->dst_id);
			continue;
		}
		progress(r, 0);
		if (!ready) {
			ready = true;
			setup_rc = pair_bytes(r, &a, &b, &bytes, &setup_e);
			if (!setup_rc)
				setup_rc = pair_setup(r, &a, &b, bytes, chunk, &setup_e);
		}
		if (setup_rc) {
			finish(x, setup_rc, &setup_e, t0);
			continue;
		}
		rc = measure(r, &a, &b, k, bytes, chunk, x, &e);
		finish(x, rc, &e, t0);
		progress(r, 1);
	}
	pair_free(&a);
	pair_free(&b);
	return nres;
}

int
bench_p2p_run(struct bench_devs *devs, const bool *selected, const struct bench_p2p_opts *opts,
              struct bench_p2p_result **out, size_t *n, struct err *err)
{
	static const struct bench_p2p_opts none;
	struct run r = { .devs = devs, .o = opts ? opts : &none };
	struct pair *pairs = NULL;
	struct bench_p2p_result *res = NULL;
	unsigned char *chunk = NULL;
	size_t *idx, nidx = 0, npair = 0, nres = 0;

	r.pace = (struct bench_pace){ .stop = r.o->stop,
		                      .progress = r.o->progress,
		                      .progress_arg = r.o->progress_arg };
	r.pace.test = r.test;
	*out = NULL;
	*n = 0;
	if (!devs || (devs->ndev && !devs->dev))
		return err_set(err, E_USAGE, "p2p: no device list");
	idx = xcalloc(devs->ndev + 1, sizeof(*idx));
	r.lost = r.o->lost ? r.o->lost : xcalloc(devs->ndev + 1, sizeof(*r.lost));
	r.why = xcalloc(devs->ndev + 1, sizeof(*r.why));
	for (size_t i = 0; i < devs->ndev; i++) {
		struct bench_dev *d = devs->dev[i];

		if ((!selected || selected[i]) && d && d->ops && d->ops->peer_copy &&
		    d->ops->peer_info && !strcmp(d->info.api, "cuda") && !r.lost[i])
			idx[nidx++] = i;
	}
	if (nidx < 2)
		goto out;
	pairs = xcalloc(nidx * (nidx - 1) / 2, sizeof(*pairs));
	for (size_t i = 0; i < nidx; i++)
		for (size_t j = i + 1; j < nidx; j++) {
			struct pair *p = &pairs[npair++];
			struct bench_dev *a = devs->dev[idx[i]], *b = devs->dev[idx[j]];
			struct err e = ERR_INIT;

			p->a = idx[i];
			p->b = idx[j];
			/* one lost by an earlier pair's question fails this one at its turn */
			if (r.lost[p->a] || r.lost[p->b]) {
				p->rc = E_LOST;
				continue;
			}
			p->rc = a->ops->peer_info(a, b, &p->pi, &e);
			if (p->rc) {
				snprintf(p->msg, sizeof(p->msg), "%s", e.msg);
				if (is_lost(p->rc)) {
					struct side sa = { .d = a, .i = p->a },
					            sb = { .d = b, .i = p->b };

					blame(&r, &sa, &sb, &e);
				}
				continue;
			}
			if (p->pi.to || p->pi.from) {
				size_t bytes = plan_bytes(&r, a, b);
				bool nvl = p->pi.atomics == 1;

				p->plan[K_FWD] = p->pi.to ? plan_seconds(nvl, bytes) : 0;
				p->plan[K_REV] = p->pi.from ? plan_seconds(nvl, bytes) : 0;
				p->plan[K_BIDIR] =
				        p->pi.to && p->pi.from ? 2 * plan_seconds(nvl, bytes) : 0;
				r.pace.plan_left +=
				        p->plan[K_FWD] + p->plan[K_REV] + p->plan[K_BIDIR];
			}
		}
	res = xcalloc(npair * 3, sizeof(*res));
	chunk = xmalloc(MIB);
	for (size_t i = 0; i < npair; i++)
		nres += run_pair(&r, &pairs[i], res + nres, chunk);
out:
	free(chunk);
	free(pairs);
	free(idx);
	free(r.why);
	if (!r.o->lost)
		free(r.lost);
	if (!nres) {
		free(res);
		res = NULL;
	}
	*out = res;
	*n = nres;
	return r.pace.stopped ? 1 : 0;
}
