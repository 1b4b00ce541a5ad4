/*
 * gpuscope fit's arithmetic: memory by line and per GPU, and speed. See
 * fit.h for the formulas and docs/fit.md for their sources.
 */
#include "fit/fit.h"

#include <ctype.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#include "core/err.h"
#include "core/strbuf.h"
#include "core/json.h"
#include "fit/models.h"
#include "core/specs.h"

static const char *const task_names[] = { "infer", "full", "freeze", "lora", "qlora" };
static const char *const prec_names[] = { "fp32", "bf16", "fp16", "fp8", "int8", "int4" };
static const char *const optim_names[] = { "adamw", "adamw-8bit", "sgd" };
static const char *const shard_names[] = { "none", "zero1", "zero2", "zero3", "fsdp" };

static int
parse_name(const char *s, const char *const *names, int n)
{
	for (int i = 0; s && i < n; i++)
		if (!strcasecmp(s, names[i]))
			return i;
	return -1;
}

int
fit_task_parse(const char *s)
{
	if (s && (!strcasecmp(s, "inference") || !strcasecmp(s, "inf")))
		return FIT_INFER;
	return parse_name(s, task_names, 5);
}

int
fit_prec_parse(const char *s)
{
	if (s && (!strcasecmp(s, "float32") || !strcasecmp(s, "f32")))
		return FIT_FP32;
	if (s && (!strcasecmp(s, "bfloat16") || !strcasecmp(s, "float16") || !strcasecmp(s, "f16")))
		return tolower((unsigned char)s[0]) == 'b' ? FIT_BF16 : FIT_FP16;
	return parse_name(s, prec_names, 6);
}

int
fit_optim_parse(const char *s)
{
	if (s && (!strcasecmp(s, "adamw8bit") || !strcasecmp(s, "adamw_8bit") ||
	          !strcasecmp(s, "adam-8bit")))
		return FIT_ADAMW_8BIT;
	if (s && !strcasecmp(s, "adam"))
		return FIT_ADAMW;
	return parse_name(s, optim_names, 3);
}

const char *
fit_task_name(enum fit_task t)
{
	return task_names[t];
}

const char *
fit_prec_name(enum fit_prec p)
{
	return prec_names[p];
}

const char *
fit_optim_name(enum fit_optim o)
{
	return optim_names[o];
}

const char *
fit_shard_name(enum fit_shard s)
{
	return shard_names[s];
}

void
fit_job_init(struct fit_job *j)
{
	memset(j, 0, sizeof(*j));
	j->task = FIT_INFER;
	j->prec = FIT_BF16;
	j->optim = FIT_ADAMW;
	j->shard = FIT_SHARD_NONE;
	j->ctx = 4096;
	j->batch = 1;
	j->gpus = 1;
	j->lora_rank = 8;
}

static bool
positive(double v)
{
	return isfinite(v) && v > 0;
}

int
fit_job_check(const struct fit_job *j, struct err *err)
{
	bool train = j->task != FIT_INFER;

	if (!positive(j->ctx) || j->ctx != floor(j->ctx))
		return err_set(err, E_USAGE, "--ctx needs a whole number of tokens above 0");
	if (!positive(j->batch) || j->batch != floor(j->batch))
		return err_set(err, E_USAGE, "--batch needs a whole number above 0");
	if (!positive(j->gpus) || j->gpus != floor(j->gpus))
		return err_set(err, E_USAGE, "--gpus needs a whole number above 0");
	if (!isfinite(j->tokens) || j->tokens < 0)
		return err_set(err, E_USAGE, "--tokens needs a number of tokens, 0 or more");
	if (j->task == FIT_LORA || j->task == FIT_QLORA) {
		if (!positive(j->lora_rank) || j->lora_rank != floor(j->lora_rank))
			return err_set(err, E_USAGE, "--lora-rank needs a whole number above 0");
	}
	if (!train && j->shard != FIT_SHARD_NONE)
		return err_set(err, E_USAGE,
		               "--zero and --fsdp shard training states; inference is split over "
		               "--gpus by tensor parallelism");
	if (!train && j->checkpointing)
		return err_set(err, E_USAGE,
		               "--checkpointing is for training (--task full, freeze, "
		               "lora or qlora)");
	if ((j->task == FIT_FULL || j->task == FIT_FREEZE || j->task == FIT_LORA) &&
	    (j->prec == FIT_INT8 || j->prec == FIT_INT4))
		return err_set(err, E_USAGE,
		               "--task %s cannot train %s weights: use --task qlora for quantised "
		               "weights, or fp32, bf16, fp16 or fp8",
		               fit_task_name(j->task), fit_prec_name(j->prec));
	if (j->task == FIT_QLORA && j->prec != FIT_INT8 && j->prec != FIT_INT4)
		return err_set(err, E_USAGE,
		               "--task qlora quantises the base weights: --precision int4 or int8 "
		               "(for %s weights use --task lora)",
		               fit_prec_name(j->prec));
	if (j->shard != FIT_SHARD_NONE && j->gpus < 2)
		return err_set(err, E_USAGE, "--%s shards over several GPUs: give --gpus 2 or more",
		               j->shard == FIT_FSDP ? "fsdp" : "zero");
	return 0;
}

double
fit_weight_bytes(enum fit_prec p)
{
	switch (p) {
	case FIT_FP32:
		return 4;
	case FIT_BF16:
	case FIT_FP16:
		return 2;
	case FIT_FP8:
	case FIT_INT8:
		return 1;
	case FIT_INT4:
		return 0.5;
	}
	return NAN;
}

double
fit_quant_bits(enum fit_prec p, enum fit_task t)
{
	if (p != FIT_INT4)
		return 0; /* fp8: per-tensor scales; int8: per-row scales (LLM.int8), < 0.1 % */
	/* QLoRA's NF4, blocks of 64 with double-quantised scales: 8/64 + 32/(64*256) bits */
	if (t == FIT_QLORA)
		return 8.0 / 64 + 32.0 / (64 * 256);
	return 0.5; /* a 16-bit scale per 32 weights: llama.cpp Q4_0's 4.5 bits per weight */
}

double
fit_kv_value_bytes(enum fit_prec p)
{
	return p == FIT_FP32 ? 4 : p == FIT_FP8 ? 1 : 2;
}

void
fit_state_bytes(enum fit_prec p, enum fit_optim o, double *w, double *g, double *k)
{
	/* pure fp32: no master copy; mixed precision: 16-bit weights and gradients, and an fp32
	 * master copy in the optimizer (K = 12 for Adam: master, momentum, variance) */
	bool fp32 = p == FIT_FP32;

	*w = fp32 ? 4 : 2;
	*g = fp32 ? 4 : 2;
	*k = NAN;
	switch (o) {
	case FIT_ADAMW:
		*k = fp32 ? 8 : 12;
		break;
	case FIT_ADAMW_8BIT: /* bitsandbytes: 1-byte momentum and variance */
		*k = fp32 ? 2 : 6;
		break;
	case FIT_SGD: /* with momentum */
		*k = fp32 ? 4 : 8;
		break;
	}
}

double
fit_zero_bytes(double params, double n, int stage, double w, double g, double k)
{
	switch (stage) {
	case 0:
		return (w + g + k) * params;
	case 1:
		return (w + g) * params + k * params / n;
	case 2:
		return w * params + (g + k) * params / n;
	default:
		return (w + g + k) * params / n;
	}
}

double
fit_kv_gqa_per_token(double layers, double kv_heads, double head_dim, double bytes)
{
	return 2 * layers * kv_heads * head_dim * bytes;
}

double
fit_kv_mla_per_token(double layers, double kv_lora_rank, double rope_dim, double bytes)
{
	return layers * (kv_lora_rank + rope_dim) * bytes;
}

double
fit_kv_bytes(const struct fit_shape *s, double ctx, double batch, double bytes)
{
	double share = s->window > 0 ? s->window_share : 0;
	double capped = s->window > 0 && ctx > s->window ? s->window : ctx;

	return s->kv_per_token * bytes * batch * ((1 - share) * ctx + share * capped);
}

double
fit_act_megatron(double s, double b, double h, double a, double t, bool sp, enum fit_recompute r)
{
	switch (r) {
	case FIT_RECOMPUTE_NONE:
		if (sp)
			return s * b * h / t * (34 + 5 * a * s / h);
		return s * b * h * (10 + 24 / t + 5 * a * s / (h * t));
	case FIT_RECOMPUTE_SELECTIVE:
		if (sp)
			return 34 * s * b * h / t;
		return s * b * h * (10 + 24 / t);
	case FIT_RECOMPUTE_FULL:
		return 2 * s * b * h;
	}
	return NAN;
}

double
fit_act_layer(double s, double b, double h, double mlp_width)
{
	return s * b * (18 * h + 8 * mlp_width);
}

/* Layers whose activations are kept for the backward pass. */
static double
grad_layers(const struct fit_shape *s, const struct fit_job *j)
{
	return j->task == FIT_FREEZE ? fmin(FIT_FREEZE_LAYERS, s->layers) : s->layers;
}

double
fit_train_activations(const struct fit_shape *s, const struct fit_job *j)
{
	double L = grad_layers(s, j);
	double layer = fit_act_layer(j->ctx, j->batch, s->hidden, s->mlp_width);
	double act = j->checkpointing ? L * 2 * j->ctx * j->batch * s->hidden + layer : L * layer;

	act += j->ctx * j->batch * s->vocab * FIT_LOGIT_BYTES;
	return j->prec == FIT_FP32 ? 2 * act : act;
}

double
fit_infer_activations(const struct fit_shape *s, const struct fit_job *j)
{
	double chunk = fmin(j->ctx, FIT_PREFILL_CHUNK);

	/* hidden states, their norm, attention in and out; gate, up and their product */
	return chunk * j->batch * (4 * s->hidden + 3 * s->mlp_width) * fit_kv_value_bytes(j->prec) +
	       j->batch * s->vocab * 4;
}

static double
nz(double v, double fallback)
{
	return isfinite(v) && v > 0 ? v : fallback;
}

double
fit_lora_per_rank(const struct model_cfg *m)
{
	double h = m->hidden, L = m->layers, heads = m->heads;
	double hd = nz(m->head_dim, h / heads), kvh = nz(m->kv_heads, heads);
	double attn, dense = 3 * (h + m->intermediate), moe = 0, dense_layers = L;

	if (m->kv_lora_rank > 0) { /* MLA: q (maybe through q_lora_rank), kv_a, kv_b, o */
		double qk = m->qk_nope_head_dim + m->qk_rope_head_dim;

		attn = m->q_lora_rank > 0 ? (h + m->q_lora_rank) + (m->q_lora_rank + heads * qk)
		                          : h + heads * qk;
		attn += (h + m->kv_lora_rank + m->qk_rope_head_dim) +
		        (m->kv_lora_rank + heads * (m->qk_nope_head_dim + m->v_head_dim)) +
		        (heads * m->v_head_dim + h);
	} else { /* q, k, v, o */
		attn = 2 * (h + heads * hd) + 2 * (h + kvh * hd);
	}
	if (m->experts > 0) {
		double ei = nz(m->moe_intermediate, m->intermediate);

		moe = (m->experts + nz(m->shared_experts, 0)) * 3 * (h + ei);
		dense_layers = nz(m->first_dense_layers, 0);
	}
	return L * attn + dense_layers * dense + (L - dense_layers) * moe;
}

void
fit_shape_from_model(const struct model_cfg *m, struct fit_shape *s)
{
	double hd = nz(m->head_dim, m->hidden / m->heads);

	memset(s, 0, sizeof(*s));
	s->params = nz(model_params(m), m->params_published);
	s->active = nz(model_active_params(m), nz(m->active_published, s->params));
	s->layers = m->layers;
	s->hidden = m->hidden;
	s->heads = m->heads;
	s->vocab = m->vocab;
	if (m->experts > 0)
		s->mlp_width = nz(m->moe_intermediate, m->intermediate) *
		               (nz(m->experts_per_token, 1) + nz(m->shared_experts, 0));
	else
		s->mlp_width = m->intermediate;
	s->kv_per_token = model_kv_bytes_per_token(m, 1);
	if (!(s->kv_per_token > 0))
		s->kv_per_token =
		        m->kv_lora_rank > 0
		                ? fit_kv_mla_per_token(m->layers, m->kv_lora_rank,
		                                       m->qk_rope_head_dim, 1)
		                : fit_kv_gqa_per_token(m->layers, nz(m->kv_heads, m->heads), hd, 1);
	if (m->sliding_window > 0) {
		s->window = m->sliding_window;
		s->window_share = m->sliding_every > 0 ? 1 - 1 / m->sliding_every : 1;
	}
	s->embed_params = m->vocab * m->hidden;
	s->block_params =
	        (s->params - s->embed_params * (m->tied_embeddings ? 1 : 2)) / nz(m->layers, 1);
	s->lora_per_rank = fit_lora_per_rank(m);
	s->max_ctx = nz(m->max_ctx, 0);
}

void
fit_memory(const struct fit_shape *s, const struct fit_job *j, struct fit_mem *o)
{
	double P = s->params, n = j->gpus, w, g, k, rest;
	bool train = j->task != FIT_INFER;
	int stage = 0;

	memset(o, 0, sizeof(*o));
	fit_state_bytes(j->prec, j->optim, &w, &g, &k);
	switch (j->task) {
	case FIT_INFER:
		o->weights = P * fit_weight_bytes(j->prec);
		o->kv_cache = fit_kv_bytes(s, j->ctx, j->batch, fit_kv_value_bytes(j->prec));
		o->activations = fit_infer_activations(s, j);
		break;
	case FIT_FULL:
	case FIT_FREEZE:
		o->trainable =
		        j->task == FIT_FULL ? P : fmin(P, FIT_FREEZE_LAYERS * s->block_params);
		o->weights = P * w;
		o->gradients = o->trainable * g;
		o->optimizer = o->trainable * k;
		break;
	case FIT_LORA:
	case FIT_QLORA:
		/* adapters trained in fp32 (PEFT, LLaMA-Factory upcast them): 4 + 4 + moments */
		o->trainable = j->lora_rank * s->lora_per_rank;
		o->weights = P * fit_weight_bytes(j->prec);
		o->adapters = o->trainable * 4;
		o->gradients = o->trainable * 4;
		o->optimizer = o->trainable * (j->optim == FIT_ADAMW        ? 8
		                               : j->optim == FIT_ADAMW_8BIT ? 2
		                                                            : 4);
		break;
	}
	o->quant = P * fit_quant_bits(j->prec, j->task) / 8;
	if (train) {
		o->activations = fit_train_activations(s, j);
		stage = j->shard == FIT_FSDP ? 3 : (int)j->shard;
		if (stage >= 1)
			o->optimizer /= n;
		if (stage >= 2)
			o->gradients /= n;
		if (stage >= 3) {
			o->weights /= n;
			o->quant /= n;
			o->adapters /= n;
			/* the layer being computed, gathered whole: DeepSpeed's 4 x largest layer
			 */
			o->gathered = 4 * fmax(s->block_params, s->embed_params);
		}
	} else if (n > 1) { /* tensor parallel */
		o->weights /= n;
		o->quant /= n;
		o->kv_cache /= n;
		o->activations /= n;
	}
	rest = o->weights + o->quant + o->gradients + o->optimizer + o->adapters + o->gathered +
	       o->activations + o->kv_cache;
	o->cuda = FIT_CUDA_CONTEXT;
	o->framework = rest * (train ? FIT_FRAMEWORK_TRAIN : FIT_FRAMEWORK_INFER);
	o->total = rest + o->cuda + o->framework;
}

static bool
fits(const struct fit_shape *s, const struct fit_job *j, double cap)
{
	struct fit_mem m;

	fit_memory(s, j, &m);
	return m.total <= cap;
}

/* The largest whole batch (or context) in [1, hi] that fits, by bisection: memory grows with it. */
static double
largest(const struct fit_shape *s, const struct fit_job *j0, bool batch, double hi, double cap)
{
	struct fit_job j = *j0;
	double *field = batch ? &j.batch : &j.ctx, lo = 1;

	*field = 1;
	if (!fits(s, &j, cap))
		return 0;
	*field = hi;
	if (fits(s, &j, cap))
		return hi;
	while (hi - lo > 1) {
		double mid = floor((lo + hi) / 2);

		*field = mid;
		if (fits(s, &j, cap))
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

double
fit_max_batch(const struct fit_shape *s, const struct fit_job *j, double cap)
{
	return largest(s, j, true, 65536, cap);
}

double
fit_max_ctx(const struct fit_shape *s, const struct fit_job *j, double cap, double limit)
{
	return largest(s, j, false, limit > 0 ? limit : 16777216, cap);
}

double
fit_spec_bytes(const struct gpu_spec *g)
{
	return isfinite(g->mem_bytes) && g->mem_bytes > 0 ? g->mem_bytes : g->mem_gb * 1e9;
}

static double
first(double a, double b)
{
	return isfinite(a) && a > 0 ? a : b;
}

double
fit_peak_tflops(const struct gpu_spec *g, const struct fit_job *j)
{
	double half = first(g->bf16, g->fp16);

	if (j->task == FIT_LORA || j->task == FIT_QLORA)
		return half; /* adapters and dequantised weights compute in 16 bits */
	switch (j->prec) {
	case FIT_FP32:
		return g->fp32;
	case FIT_BF16:
		return half;
	case FIT_FP16:
		return first(g->fp16, g->bf16);
	case FIT_FP8:
		return first(g->fp8, half);
	case FIT_INT8:
		return j->task == FIT_INFER ? first(g->int8, half) : half;
	case FIT_INT4:
		return half; /* weights dequantised to 16 bits for the matrix units */
	}
	return NAN;
}

void
fit_speed(const struct fit_shape *s, const struct fit_job *j, const struct gpu_spec *g,
          struct fit_speed *o)
{
	double n = j->gpus, bw, peak, weights, kv, t_bw, t_flops, step;

	memset(o, 0, sizeof(*o));
	o->time_s = o->energy_kwh = NAN;
	o->bw_gbs = g->mem_bw_gbs;
	o->peak_tflops = fit_peak_tflops(g, j);
	o->tdp_w = g->tdp_w;
	bw = n * o->bw_gbs * 1e9;
	peak = n * o->peak_tflops * 1e12;

	/* decode: every step reads the active weights once and the whole KV cache */
	weights = s->active * (fit_weight_bytes(j->prec) + fit_quant_bits(j->prec, j->task) / 8);
	kv = fit_kv_bytes(s, j->ctx, j->batch, fit_kv_value_bytes(j->prec));
	o->bytes_per_step = weights + kv;
	o->decode_bound = bw / o->bytes_per_step;
	t_bw = o->bytes_per_step / (bw * FIT_BW_EFFICIENCY);
	t_flops = 2 * s->active * j->batch / (peak * FIT_MFU);
	step = isfinite(t_flops) ? fmax(t_bw, t_flops) : t_bw;
	o->decode = 1 / step;
	o->decode_total = j->batch / step;

	o->prefill = peak * FIT_MFU / (2 * s->active);
	if (j->task == FIT_FULL)
		o->flops_per_token = (j->checkpointing ? 8 : 6) * s->active;
	else if (j->task !=
	         FIT_INFER) /* no weight gradients: forward 2N, activation gradients 2N */
		o->flops_per_token = (j->checkpointing ? 6 : 4) * s->active;
	if (o->flops_per_token > 0)
		o->train = peak * FIT_MFU / o->flops_per_token;
	if (j->tokens > 0) {
		double rate = j->task == FIT_INFER ? o->decode_total : o->train;

		o->time_s = j->tokens / rate;
		o->energy_kwh = n * o->tdp_w * o->time_s / 3.6e6;
	}
}

static void
jw_sep(struct fit_jw *jw, const char *key)
{
	if (!jw->first)
		strbuf_addch(jw->sb, ',');
	strbuf_addch(jw->sb, '\n');
	strbuf_addchars(jw->sb, ' ', 2 * (size_t)jw->depth);
	if (key) {
		json_str(jw->sb, key);
		strbuf_addstr(jw->sb, ": ");
	}
	jw->first = false;
}

void
fit_jw_begin(struct fit_jw *jw, struct strbuf *sb)
{
	jw->sb = sb;
	jw->depth = 1;
	jw->first = true;
	strbuf_addch(sb, '{');
}

void
fit_jw_end(struct fit_jw *jw)
{
	fit_jw_close(jw, '}');
	strbuf_addch(jw->sb, '\n');
}

void
fit_jw_open(struct fit_jw *jw, const char *key, char bracket)
{
	jw_sep(jw, key);
	strbuf_addch(jw->sb, bracket);
	jw->depth++;
	jw->first = true;
}

void
fit_jw_close(struct fit_jw *jw, char bracket)
{
	jw->depth--;
	if (!jw->first) {
		strbuf_addch(jw->sb, '\n');
		strbuf_addchars(jw->sb, ' ', 2 * (size_t)jw->depth);
	}
	strbuf_addch(jw->sb, bracket);
	jw->first = false;
}

void
fit_jw_str(struct fit_jw *jw, const char *key, const char *v)
{
	jw_sep(jw, key);
	if (v)
		json_str(jw->sb, v);
	else
		strbuf_addstr(jw->sb, "null");
}

void
fit_jw_num(struct fit_jw *jw, const char *key, double v, int decimals)
{
	jw_sep(jw, key);
	json_num(jw->sb, v, decimals);
}

void
fit_jw_bool(struct fit_jw *jw, const char *key, bool v)
{
	jw_sep(jw, key);
	strbuf_addstr(jw->sb, v ? "true" : "false");
}

void
fit_jw_null(struct fit_jw *jw, const char *key)
{
	jw_sep(jw, key);
	strbuf_addstr(jw->sb, "null");
}
