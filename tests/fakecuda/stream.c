/*
 * Streams of the fake: a worker thread per stream runs its queue in order
 * (copies, memsets, kernels, event records), advancing the stream's device
 * clock by each operation's modelled duration and sleeping so that wall
 * time keeps up with it (scaled by the scenario's realtime). The legacy
 * default stream is ordered against the other blocking streams of its
 * context as the driver orders it: it waits for what they had queued, and
 * they wait for what it had queued.
 */
#include "fake.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* wait on ctx->cv until wall time `until` or the context dies; ctx->mu held */
static void
wait_until(struct CUctx_st *ctx, double until)
{
	while (!ctx->dying) {
		double left = until - now_s();
		struct timespec ts;
		if (left <= 0)
			return;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		double t = (double)ts.tv_sec + ts.tv_nsec / 1e9 + left;
		ts.tv_sec = (time_t)t;
		ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
		if (ts.tv_nsec >= 1000000000L)
			ts.tv_nsec = 999999999L;
		pthread_cond_timedwait(&ctx->cv, &ctx->mu, &ts);
	}
}

static bool
deps_done(const struct fcu_op *op)
{
	for (size_t i = 0; i < op->nwait; i++)
		if (op->wait[i]->done < op->wait_n[i])
			return false;
	return true;
}

static void
sticky(struct CUctx_st *ctx, CUresult r)
{
	if (ctx->sticky == CUDA_SUCCESS)
		ctx->sticky = r;
}

/*
 * gs_spin: thread 0 polls the mapped flag until it is set or max_ns have
 * passed; the device clock advances by the wall time it held the stream.
 * ctx->mu held.
 */
static double
spin(struct CUctx_st *ctx, const struct fcu_launch *L)
{
	bool pinned;
	const int32_t *flag = fcu_mem(ctx, L->arg[0].u64, sizeof(*flag), &pinned);
	double t0 = now_s(), limit = t0 + (double)L->arg[1].u64 / 1e9;

	if (!flag) {
		sticky(ctx, CUDA_ERROR_ILLEGAL_ADDRESS);
		return 0;
	}
	while (!ctx->dying && !__atomic_load_n(flag, __ATOMIC_ACQUIRE) && now_s() < limit)
		wait_until(ctx, now_s() + 20e-6);
	return now_s() - t0;
}

/* run op; ctx->mu held on entry and exit, released around the work */
static double
run(struct CUstream_st *s, struct fcu_op *op)
{
	struct CUctx_st *ctx = s->ctx;
	double dur = 0, wall0 = now_s();

	if (ctx->sticky != CUDA_SUCCESS)
		return 0; /* a lost context runs nothing more */
	switch (op->kind) {
	case FO_EVENT:
		return 0;
	case FO_HOOK: {
		fcu_hook_fn *fn = op->hook;

		op->hook = NULL; /* ran: op_free() does not call it again */
		pthread_mutex_unlock(&ctx->mu);
		CUresult r = fn(op->hook_arg, true);
		pthread_mutex_lock(&ctx->mu);
		if (r != CUDA_SUCCESS) {
			sticky(ctx, r);
			return 0;
		}
		dur = op->hook_s;
		break;
	}
	case FO_KERNEL:
		if (op->launch.kern == BK_SPIN)
			return spin(ctx, &op->launch);
		if (op->launch.hang) {
			/* never completes: cuStreamQuery answers NOT_READY until the context goes
			 */
			while (!ctx->dying)
				pthread_cond_wait(&ctx->cv, &ctx->mu);
			return 0;
		}
		pthread_mutex_unlock(&ctx->mu);
		CUresult r = fcu_kern_run(ctx, &op->launch, &dur);
		pthread_mutex_lock(&ctx->mu);
		if (op->launch.fail)
			r = CUDA_ERROR_LAUNCH_FAILED;
		if (r != CUDA_SUCCESS) {
			sticky(ctx, r);
			return dur;
		}
		break;
	case FO_COPY:
		pthread_mutex_unlock(&ctx->mu);
		memmove(op->dst, op->src, op->bytes);
		pthread_mutex_lock(&ctx->mu);
		dur = op->Bps > 0 ? (double)op->bytes / op->Bps : 0;
		break;
	case FO_SET8:
	case FO_SET32:
		pthread_mutex_unlock(&ctx->mu);
		if (op->kind == FO_SET8)
			memset(op->dst, (int)op->value, op->bytes);
		else
			for (size_t i = 0; i < op->bytes / 4; i++)
				((uint32_t *)op->dst)[i] = op->value;
		pthread_mutex_lock(&ctx->mu);
		dur = op->Bps > 0 ? (double)op->bytes / op->Bps : 0;
		break;
	}
	if (fcu_sc.realtime > 0)
		wait_until(ctx, wall0 + dur * fcu_sc.realtime);
	return dur;
}

static void
op_free(struct fcu_op *op)
{
	if (op->hook)
		op->hook(op->hook_arg, false);
	free(op->wait);
	free(op->wait_n);
	free(op);
}

static void *
worker(void *arg)
{
	struct CUstream_st *s = arg;
	struct CUctx_st *ctx = s->ctx;

	pthread_mutex_lock(&ctx->mu);
	for (;;) {
		while (!s->stop && (!s->head || !deps_done(s->head)) && !(s->destroyed && !s->head))
			pthread_cond_wait(&ctx->cv, &ctx->mu);
		if (s->stop || !s->head)
			break;
		struct fcu_op *op = s->head;
		double start = s->clock > op->enq_clock ? s->clock : op->enq_clock;
		double dur = run(s, op);
		if (s->stop)
			break;
		s->clock = start + dur;
		if (op->kind == FO_EVENT) {
			op->event->t = s->clock;
			op->event->done++;
		}
		if (s->clock > ctx->clock)
			ctx->clock = s->clock;
		for (size_t i = 0; i < ctx->dev->nfault; i++) {
			const struct fcu_fault *f = &ctx->dev->fault[i];
			if ((f->kind == FF_ILLEGAL_ADDRESS || f->kind == FF_ECC) &&
			    s->clock >= f->after_s)
				sticky(ctx, f->kind == FF_ECC ? CUDA_ERROR_ECC_UNCORRECTABLE
				                              : CUDA_ERROR_ILLEGAL_ADDRESS);
		}
		s->head = op->next;
		if (!s->head)
			s->tail = NULL;
		s->done++;
		op_free(op);
		pthread_cond_broadcast(&ctx->cv);
	}
	pthread_mutex_unlock(&ctx->mu);
	return NULL;
}

CUresult
fcu_stream_start(struct CUstream_st *s)
{
	if (pthread_create(&s->thread, NULL, worker, s) != 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	s->started = true;
	return CUDA_SUCCESS;
}

void
fcu_enqueue(struct CUstream_st *s, struct fcu_op *op)
{
	struct CUctx_st *ctx = s->ctx;
	size_t n = 0;

	pthread_mutex_lock(&ctx->mu);
	/* the legacy default stream and the blocking streams wait for each other */
	for (struct CUstream_st *o = ctx->stream; o; o = o->next)
		if (o != s && !(o->flags & CU_STREAM_NON_BLOCKING) &&
		    !(s->flags & CU_STREAM_NON_BLOCKING) && (s->is_null || o->is_null) &&
		    o->done < o->enq)
			n++;
	if (n) {
		op->wait = calloc(n, sizeof(*op->wait));
		op->wait_n = calloc(n, sizeof(*op->wait_n));
		if (!op->wait || !op->wait_n)
			abort();
		for (struct CUstream_st *o = ctx->stream; o; o = o->next)
			if (o != s && !(o->flags & CU_STREAM_NON_BLOCKING) &&
			    !(s->flags & CU_STREAM_NON_BLOCKING) && (s->is_null || o->is_null) &&
			    o->done < o->enq) {
				op->wait[op->nwait] = o;
				op->wait_n[op->nwait++] = o->enq;
			}
	}
	op->enq_clock = ctx->clock;
	op->next = NULL;
	if (s->tail)
		s->tail->next = op;
	else
		s->head = op;
	s->tail = op;
	s->enq++;
	if (op->kind == FO_EVENT)
		op->event->enq++;
	pthread_cond_broadcast(&ctx->cv);
	pthread_mutex_unlock(&ctx->mu);
}

CUresult
fcu_stream_wait(struct CUstream_st *s, bool query)
{
	struct CUctx_st *ctx = s->ctx;
	CUresult r;

	pthread_mutex_lock(&ctx->mu);
	while (!query && s->done < s->enq && ctx->sticky == CUDA_SUCCESS && !ctx->dying)
		pthread_cond_wait(&ctx->cv, &ctx->mu);
	if (ctx->sticky != CUDA_SUCCESS)
		r = ctx->sticky;
	else
		r = s->done < s->enq ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
	pthread_mutex_unlock(&ctx->mu);
	return r;
}

void
fcu_streams_stop(struct CUctx_st *ctx)
{
	pthread_mutex_lock(&ctx->mu);
	ctx->dying = true;
	for (struct CUstream_st *s = ctx->stream; s; s = s->next)
		s->stop = true;
	pthread_cond_broadcast(&ctx->cv);
	pthread_mutex_unlock(&ctx->mu);
	for (struct CUstream_st *s = ctx->stream; s; s = s->next)
		if (s->started)
			pthread_join(s->thread, NULL);
	for (struct CUstream_st *s = ctx->stream; s; s = s->next) {
		while (s->head) {
			struct fcu_op *op = s->head;
			s->head = op->next;
			op_free(op);
		}
		s->tail = NULL;
	}
}
