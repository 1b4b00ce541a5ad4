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
#include "fit/quant.h"
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
	j->trainer = FIT_TRAINER_HF;
	j->quant = -1;
	j->group_size = 128;
	j->kv_cache = -1;
}

static bool
positive(double v)
{
	return isfinite(v) && v > 0;
}

/* The checks of the options issue 17 added: formats, KV-cache types, offload, pure 16-bit. */
static int
job_check_new(const struct fit_job *j, struct err *err)
{
	const struct fit_quant *qs, *q = NULL;
	const struct fit_kv_type *kvs;
	size_t nq = fit_quants(&qs), nkv = fit_kv_types(&kvs);
	bool train = j->task != FIT_INFER;

	if (j->quant >= 0) {
		if ((size_t)j->quant >= nq)
			return err_set(err, E_USAGE, "--precision: no such format");
		q = &qs[j->quant];
		if (q->group_bits > 0 &&
		    (!positive(j->group_size) || j->group_size != floor(j->group_size)))
			return err_set(err, E_USAGE, "--group-size needs a whole number above 0");
		if (train && j->task != FIT_QLORA)
			return err_set(err, E_USAGE,
			               "--task %s cannot train %s weights: use --task qlora for "
			               "quantised weights, or fp32, bf16, fp16 or fp8",
			               fit_task_name(j->task), q->name);
		if (j->task == FIT_QLORA &&
		    (q->gguf || q->prec == FIT_FP8 || !strcmp(q->name, "nvfp4") ||
		     !strcmp(q->name, "mxfp4")))
			return err_set(
			        err, E_USAGE,
			        "--task qlora trains adapters on bitsandbytes (nf4, int8), awq "
			        "or gptq weights, not %s (a format for inference)",
			        q->name);
	}
	if (j->kv_cache >= 0 && (size_t)j->kv_cache >= nkv)
		return err_set(err, E_USAGE, "--kv-cache: no such type");
	if (train && j->kv_cache >= 0)
		return err_set(err, E_USAGE, "--kv-cache is for inference (--task infer)");
	if (!train && (j->offload != FIT_OFFLOAD_NONE || j->pure16))
		return err_set(err, E_USAGE,
		               "--%s is for training (--task full, freeze, lora or qlora)",
		               j->pure16 ? "pure-bf16" : "offload");
	/* DeepSpeed offloads parameters only under ZeRO-3 (offload_param), FSDP only when it shards
	 */
	if ((j->offload == FIT_OFFLOAD_PARAMS || j->offload == FIT_OFFLOAD_ALL) &&
	    j->shard != FIT_ZERO3 && j->shard != FIT_FSDP)
		return err_set(err, E_USAGE,
		               "--offload %s moves sharded parameters: give --zero 3 or --fsdp "
		               "(--offload optimizer works without sharding)",
		               j->offload == FIT_OFFLOAD_ALL ? "all" : "params");
	if (j->pure16 && j->prec == FIT_FP32)
		return err_set(err, E_USAGE,
		               "--pure-bf16 trains in 16 bits: not with --precision fp32");
	return 0;
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
	/* one GPU with ZeRO makes sense only to offload (ZeRO-Offload's single-GPU use) */
	if (j->shard != FIT_SHARD_NONE && j->gpus < 2 && j->offload == FIT_OFFLOAD_NONE)
		return err_set(err, E_USAGE,
		               "--%s shards over several GPUs: give --gpus 2 or more (or --offload "
		               "on one GPU)",
		               j->shard == FIT_FSDP ? "fsdp" : "zero");
	return job_check_new(j, err);
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

void
fit_job_state_bytes(const struct fit_job *j, double *w, double *g, double *k)
{
	fit_state_bytes(j->prec, j->optim, w, g, k);
	/* torchtune's recipes train in the model's dtype (dtype: bf16), states included */
	if (!j->pure16 && !(j->trainer == FIT_TRAINER_TORCHTUNE && j->prec != FIT_FP32))
		return;
	/* LLaMA-Factory pure_bf16: the model in bf16, no fp32 master; torch AdamW keeps its
	 * moments in the parameters' dtype: 2 + 2 + (2 + 2) = 8 bytes per parameter, its
	 * README's "pure bf16 8x GB" */
	*w = 2;
	*g = 2;
	*k = j->optim == FIT_ADAMW ? 4 : 2; /* 8-bit Adam: 1 + 1; SGD: a 16-bit momentum */
}

const struct fit_quant *
fit_job_quant(const struct fit_job *j)
{
	const struct fit_quant *q;
	size_t n = fit_quants(&q);
	int i = j->quant;

	if (i < 0 && j->task == FIT_QLORA && (j->prec == FIT_INT4 || j->prec == FIT_INT8))
		i = fit_quant_find(j->prec == FIT_INT8 ? "int8" : "nf4");
	/* serving a plain fp8 / int8 / int4 model: a checkpoint of linear layers in it, the
	 * embeddings and LM head left in 16 bits as every such format does (FP8, LLM.int8,
	 * GPTQ / AWQ); fp8 training quantises as --precision says */
	if (i < 0 && j->task == FIT_INFER && j->prec == FIT_FP8)
		i = fit_quant_find("fp8");
	if (i < 0 && j->task == FIT_INFER && (j->prec == FIT_INT8 || j->prec == FIT_INT4))
		i = fit_quant_find(j->prec == FIT_INT8 ? "int8" : "int4");
	return i >= 0 && (size_t)i < n ? &q[i] : NULL;
}

bool
fit_job_upcasts(const struct fit_job *j)
{
	const struct fit_quant *q = fit_job_quant(j);

	/*
	 * peft utils/other.py prepare_model_for_kbit_training(): every fp16 / bf16 parameter
	 * to fp32 unless the model is GPTQ (or AQLM, EETQ, HQQ, torchao); TRL's SFTTrainer
	 * calls it for k-bit models. axolotl calls it too but then casts norms, embed_tokens
	 * and lm_head back to bf16 when flash attention is on, as its configs have it
	 * (loaders/model.py convert_embedding_modules_dtype); LLaMA-Factory, unsloth and
	 * torchtune never upcast them.
	 */
	return j->task == FIT_QLORA && q && strcmp(q->name, "gptq") && j->trainer == FIT_TRAINER_HF;
}

bool
fit_job_checkpointing(const struct fit_job *j)
{
	if (j->task == FIT_INFER)
		return false;
	if (j->checkpointing_set || j->checkpointing)
		return j->checkpointing;
	switch (j->trainer) {
	case FIT_TRAINER_LLAMA_FACTORY:
		/* model/model_utils/checkpointing.py: on unless disable_gradient_checkpointing,
		 * every stage and method */
	case FIT_TRAINER_UNSLOTH:   /* use_gradient_checkpointing="unsloth" by default */
	case FIT_TRAINER_TORCHTUNE: /* recipes/configs: enable_activation_checkpointing: True */
		return true;
	case FIT_TRAINER_HF:
	case FIT_TRAINER_AXOLOTL:
		/* prepare_model_for_kbit_training(use_gradient_checkpointing=True) and the
		 * PEFT / TRL recipes; TrainingArguments.gradient_checkpointing=False for full */
		break;
	}
	return j->task == FIT_LORA || j->task == FIT_QLORA;
}

bool
fit_job_ggml(const struct fit_job *j)
{
	const struct fit_quant *q = fit_job_quant(j);

	return j->task == FIT_INFER && (j->ggml || (q && q->gguf));
}

double
fit_job_kv_value_bytes(const struct fit_job *j)
{
	const struct fit_kv_type *kv;
	size_t n = fit_kv_types(&kv);

	if (j->kv_cache >= 0 && (size_t)j->kv_cache < n)
		return kv[j->kv_cache].bytes;
	/* engines keep the cache in the activations' dtype unless told (vLLM kv_cache_dtype
	 * "auto", llama.cpp -ctk f16): 16 bits under fp8 or quantised weights too */
	return j->prec == FIT_FP32 ? 4 : 2;
}

/* The decoder layers' linear weights (what bitsandbytes and GPTQ / AWQ quantise). */
static double
linear_params(const struct fit_shape *s)
{
	if (s->linear_params > 0)
		return s->linear_params;
	return fmax(0, s->params - s->embed_params * (s->tied ? 1 : 2) - s->norm_params);
}

/* A job's weights in bytes, by part. */
struct wparts {
	double lin, lin_scales; /* the decoder layers' linear weights; of them, scales */
	double embed, head;     /* token embeddings; the LM head when untied */
	double rest;            /* norms, MoE routers, biases */
	bool embed_quantised;   /* embed and head quantised with the layers (GGUF) */
	double dequant;         /* the largest linear layer dequantised to 16 bits */
};

static void
weight_parts(const struct fit_shape *s, const struct fit_job *j, struct wparts *o)
{
	const struct fit_quant *q = fit_job_quant(j);
	double headp = s->tied ? 0 : s->embed_params, lin = linear_params(s), ub;
	double group = positive(j->group_size) ? j->group_size : 128;

	memset(o, 0, sizeof(*o));
	if (!q) { /* a plain precision: every weight at it, as before */
		double b = fit_weight_bytes(j->prec) + fit_quant_bits(j->prec, j->task) / 8;

		o->embed = s->embed_params * b;
		o->head = headp * b;
		o->lin = fmax(0, s->params - s->embed_params - headp) * b;
		o->lin_scales = fmax(0, s->params - s->embed_params - headp) *
		                fit_quant_bits(j->prec, j->task) / 8;
		o->embed_quantised = true;
		return;
	}
	o->lin = fit_quant_linear_bits(q, s, group) / 8;
	o->lin_scales =
	        q->gguf ? 0 : lin * (q->group_bits > 0 ? q->group_bits / group : q->scale_bits) / 8;
	if (q->gguf) {
		/* GGUF: embeddings and output quantised too; norms and 1-D tensors f32 */
		o->embed = s->embed_params * fit_quant_embed_bits(q, s) / 8;
		o->head = headp * fit_quant_head_bits(q) / 8;
		o->rest = fmax(0, s->params - lin - s->embed_params - headp) * 4;
		o->embed_quantised = true;
	} else {
		/* nn.Linear layers only: embeddings, LM head (transformers' get_keys_to_not_convert
		 * keeps the output embedding), norms in 16 bits, or fp32 once upcast */
		ub = fit_job_upcasts(j) ? 4 : 2;
		o->embed = s->embed_params * ub;
		o->head = headp * ub;
		o->rest = fmax(0, s->params - lin - s->embed_params - headp) * ub;
	}
	/*
	 * bitsandbytes' MatMul4Bit / MatMul8bitLt dequantise a layer's whole weight to 16
	 * bits for any input of more than one token (and again in the backward); AWQ / GPTQ
	 * kernels do too for long inputs (vLLM awq_dequantize): the largest linear layer.
	 * GGUF (llama.cpp MMQ), FP8, NVFP4 and MXFP4 kernels use the weights as stored.
	 */
	if (q->bnb || q->group_bits > 0 || !strcmp(q->name, "int4")) {
		double largest =
		        s->largest_linear > 0 ? s->largest_linear : s->hidden * s->mlp_width;

		o->dequant = 2 * largest;
	}
}

double
fit_job_weight_bytes(const struct fit_shape *s, const struct fit_job *j)
{
	struct wparts w;

	weight_parts(s, j, &w);
	return w.lin + w.embed + w.head + w.rest;
}

double
fit_job_active_weight_bytes(const struct fit_shape *s, const struct fit_job *j)
{
	struct wparts w;
	double lin = linear_params(s), inactive = fmax(0, s->params - s->active), share = 1;

	weight_parts(s, j, &w);
	if (!fit_job_quant(j)) /* plain precision: the linear part is everything else */
		lin = fmax(0, s->params - s->embed_params * (s->tied ? 1 : 2));
	if (lin > 0)
		share = fmax(0, lin - inactive) / lin; /* MoE: the experts not routed to */
	/* a decode step reads the layers, the norms and the LM head; of an untied embedding
	 * matrix only the token's row */
	return w.lin * share + w.rest + (s->tied ? w.embed : w.head);
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

/*
 * Bytes per value of the residual stream a checkpoint keeps: 16 bits, but
 * fp32 when the embeddings were upcast (prepare_model_for_kbit_training: the
 * fp32 embedding's output stays fp32 through the residual adds, autocast
 * or not) or the model is fp32.
 */
static double
stream_bytes(const struct fit_job *j)
{
	return j->prec == FIT_FP32 || fit_job_upcasts(j) ? 4 : 2;
}

double
fit_train_logits(const struct fit_shape *s, const struct fit_job *j)
{
	double tokens = j->ctx * j->batch, head = 0;

	if (j->trainer == FIT_TRAINER_UNSLOTH)
		return tokens * s->hidden * FIT_LOGITS_FUSED_PER_HIDDEN;
	if (j->trainer == FIT_TRAINER_TORCHTUNE)
		return tokens * s->vocab *
		       (j->compile ? FIT_LOGITS_COMPILED_CHUNKED_BYTES : FIT_LOGITS_CHUNKED_BYTES);
	/*
	 * An LM head upcast to fp32 (prepare_model_for_kbit_training) runs under the
	 * Trainer's bf16 autocast: F.linear casts its weight to a bf16 copy, which the
	 * matmul's backward keeps until the loss's backward has run.
	 */
	if (fit_job_upcasts(j))
		head = s->embed_params * 2;
	return tokens * s->vocab * (j->compile ? FIT_LOGITS_COMPILED_BYTES : FIT_LOGITS_HF_BYTES) +
	       head;
}

double
fit_train_activations(const struct fit_shape *s, const struct fit_job *j)
{
	double L = grad_layers(s, j), tokens = j->ctx * j->batch;
	double layer = fit_act_layer(j->ctx, j->batch, s->hidden, s->mlp_width), kept;

	if (j->prec == FIT_FP32)
		layer *= 2;
	if (!fit_job_checkpointing(j))
		return L * layer; /* every layer's, alive with the logits when backward starts */
	/*
	 * Checkpointed (torch.utils.checkpoint per decoder layer): each layer's input,
	 * and in the backward one layer recomputed. That runs after the loss's backward
	 * has freed the logits, so only what it needs above them adds to the peak.
	 * unsloth's offloaded checkpoints keep only a few layer inputs on the GPU.
	 */
	kept = tokens * s->hidden * stream_bytes(j);
	if (j->trainer == FIT_TRAINER_UNSLOTH)
		kept *= fmin(L, FIT_OFFLOADED_CKPT_LAYERS);
	else
		kept *= L;
	return kept + fmax(0, layer - fit_train_logits(s, j));
}

double
fit_infer_activations(const struct fit_shape *s, const struct fit_job *j)
{
	bool ggml = fit_job_ggml(j);
	double chunk = fmin(j->ctx, ggml ? FIT_GGML_UBATCH : FIT_PREFILL_CHUNK);
	double b = ggml || j->prec == FIT_FP32 ? 4 : 2;

	/* hidden states, their norm, attention in and out; gate, up and their product */
	return chunk * j->batch * (4 * s->hidden + 3 * s->mlp_width) * b + j->batch * s->vocab * 4;
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

/*
 * The linear layers of m by kind (what quantisation formats treat apart):
 * the projections of models.c's parameter count without norms, biases and
 * MoE routers, which stay in fit_shape's params as the rest.
 */
static void
linear_shape(const struct model_cfg *m, struct fit_shape *s)
{
	double h = m->hidden, L = m->layers, heads = m->heads;
	double hd = nz(m->head_dim, h / heads), kvh = nz(m->kv_heads, heads);
	double attn, v, o, dense_layers = L, moe_layers = 0, ei = 0, ne = 0, largest;
	bool gemma = !strcmp(m->family, "gemma2") || !strcmp(m->family, "gemma3");

	if (m->kv_lora_rank > 0) { /* MLA: q_a, q_b (or q), kv_a, kv_b, o */
		double qk = m->qk_nope_head_dim + m->qk_rope_head_dim, ql = nz(m->q_lora_rank, 0);

		v = m->kv_lora_rank * heads * (m->qk_nope_head_dim + m->v_head_dim); /* kv_b */
		o = heads * m->v_head_dim * h;
		attn = (ql > 0 ? h * ql + ql * heads * qk : h * heads * qk) +
		       h * (m->kv_lora_rank + m->qk_rope_head_dim) + v + o;
		largest = fmax(fmax(v, o), ql > 0 ? ql * heads * qk : h * heads * qk);
	} else {
		v = h * kvh * hd;
		o = heads * hd * h;
		attn = 2 * o + 2 * v;
		largest = o;
	}
	if (m->experts > 0) {
		ei = nz(m->moe_intermediate, m->intermediate);
		ne = m->experts + nz(m->shared_experts, 0);
		dense_layers = nz(m->first_dense_layers, 0);
		moe_layers = L - dense_layers;
		largest = fmax(largest, h * ei);
	}
	if (dense_layers > 0)
		largest = fmax(largest, h * m->intermediate);
	s->tied = m->tied_embeddings;
	s->norm_params = L * h * (gemma ? 4 : 2) + h;
	s->v_params = L * v;
	s->o_params = L * o;
	s->down_params = dense_layers * h * m->intermediate + moe_layers * ne * h * ei;
	s->linear_params = L * attn + 3 * s->down_params;
	s->largest_linear = largest;
	s->gqa = heads / kvh;
	s->experts = nz(m->experts, 0);
	if (!(s->linear_params > 0 && s->linear_params < s->params))
		s->linear_params = s->v_params = s->o_params = s->down_params = 0;
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
		/* every Nth layer global: floor(layers / N) of them (Gemma 3 27B: 10 of 62), as
		 * models.c's model_kv_bytes() counts */
		s->window_share = m->sliding_every > 0 && m->layers > 0
		                          ? 1 - floor(m->layers / m->sliding_every) / m->layers
		                          : 1;
	}
	s->embed_params = m->vocab * m->hidden;
	s->block_params =
	        (s->params - s->embed_params * (m->tied_embeddings ? 1 : 2)) / nz(m->layers, 1);
	s->lora_per_rank = fit_lora_per_rank(m);
	s->max_ctx = nz(m->max_ctx, 0);
	linear_shape(m, s);
}

void
fit_ds_zero2_bytes(double params, double gpus_per_node, double nodes, bool offload_optimizer,
                   double *gpu, double *cpu)
{
	double total_gpus = gpus_per_node * nodes;

	if (offload_optimizer) {
		*gpu = 2 * params;
		*cpu = params * fmax(4 * gpus_per_node, 16) * FIT_DS_BUFFER_FACTOR;
	} else {
		*gpu = 4 * params + 16 * params / total_gpus;
		*cpu = params * 4 * gpus_per_node * FIT_DS_BUFFER_FACTOR; /* loading the model */
	}
}

void
fit_ds_zero3_bytes(double params, double largest_layer, double gpus_per_node, double nodes,
                   bool offload_params, bool offload_optimizer, bool zero_init, double *gpu,
                   double *cpu)
{
	double total_gpus = gpus_per_node * nodes, per_node = 1 / nodes;
	double layer = 4 * largest_layer, f = FIT_DS_BUFFER_FACTOR;

	if (offload_optimizer && offload_params) {
		*gpu = layer;
		*cpu = params *
		       (zero_init ? 18 * per_node : fmax(4 * gpus_per_node, 18 * per_node)) * f;
	} else if (offload_optimizer) {
		*gpu = layer + 2 * params / total_gpus;
		*cpu = params *
		       (zero_init ? 16 * per_node : fmax(4 * gpus_per_node, 16 * per_node)) * f;
	} else {
		*gpu = layer + 18 * params / total_gpus;
		*cpu = (zero_init ? largest_layer : params) * 4 * gpus_per_node * f;
	}
}

/*
 * ZeRO-3 / FSDP: the layer being computed and the one prefetched, gathered
 * whole in the weights' stored bytes (DeepSpeed's 4 x largest layer is two
 * of them in 16 bits): the largest of a decoder layer and the embeddings.
 */
static double
gathered_bytes(const struct fit_shape *s, const struct fit_job *j)
{
	struct wparts w;
	double lin = linear_params(s), block, embed;

	weight_parts(s, j, &w);
	if (j->task == FIT_FULL || j->task == FIT_FREEZE) {
		double wb, g, k;

		fit_job_state_bytes(j, &wb, &g, &k);
		return 2 * wb * fmax(s->block_params, s->embed_params);
	}
	block = s->layers > 0 && lin > 0 ? (w.lin + w.rest) / s->layers : 0;
	embed = w.embed;
	return 2 * fmax(block, embed);
}

/*
 * --offload: what leaves the GPU for host memory. DeepSpeed ZeRO-Offload
 * (offload_optimizer): the optimizer states with their fp32 master weights
 * and the gradients (in fp32 under mixed precision) live and step on the
 * CPU: 12 + 4 = 16 bytes per trained parameter for mixed-precision AdamW,
 * x 1.5 (the estimators' buffer factor), at ZeRO-2 at least 4 bytes per
 * parameter per GPU of the node, as estimate_zero2 says; the GPU keeps the
 * 16-bit weights, its gradient buckets streamed out. offload_param (ZeRO-3)
 * / FSDP CPUOffload: the 16-bit weights too (estimate_zero3's 18), gathered
 * a layer at a time. Pure 16-bit and LoRA jobs move what they hold.
 * full: the job's unsharded states (weights, gradients, optimizer, adapters).
 */
static void
apply_offload(const struct fit_shape *s, const struct fit_job *j, struct fit_mem *o, int stage,
              const struct fit_mem *full)
{
	bool opt = j->offload == FIT_OFFLOAD_OPTIMIZER || j->offload == FIT_OFFLOAD_ALL;
	bool par = j->offload == FIT_OFFLOAD_PARAMS || j->offload == FIT_OFFLOAD_ALL;
	bool lora = j->task == FIT_LORA || j->task == FIT_QLORA;
	double T = o->trainable, n = j->gpus, host = 0;

	if (opt) {
		/* the gradients in fp32 under mixed precision; LoRA's fp32 adapters are their
		 * own master copy, moved with the states */
		double grads = lora || j->pure16 || j->prec == FIT_FP32 ? full->gradients : 4 * T;

		host = full->optimizer + grads + (lora ? full->adapters : 0);
		if (par && !lora)
			host += full->weights * (T / s->params);
		if (stage < 3)
			host = fmax(host, 4 * T * n);
		o->host += host * FIT_DS_BUFFER_FACTOR;
		o->optimizer = o->gradients = 0;
		if (lora)
			o->adapters = 0;
	}
	if (par) {
		double frozen = full->weights + full->quant + full->unquantised;

		if (!lora && opt) /* the trained weights went with the states */
			frozen = full->weights * (1 - T / s->params);
		o->host += frozen * (stage == 3 ? 1 : n);
		o->weights = o->quant = o->unquantised = 0;
		o->gathered = gathered_bytes(s, j);
	}
}

void
fit_memory(const struct fit_shape *s, const struct fit_job *j, struct fit_mem *o)
{
	double P = s->params, n = j->gpus, w, g, k, rest;
	bool train = j->task != FIT_INFER;
	struct wparts wp;
	int stage = 0;

	memset(o, 0, sizeof(*o));
	fit_job_state_bytes(j, &w, &g, &k);
	weight_parts(s, j, &wp);
	switch (j->task) {
	case FIT_INFER:
	case FIT_LORA:
	case FIT_QLORA:
		if (wp.embed_quantised) {
			o->weights = wp.lin - wp.lin_scales + wp.embed + wp.head + wp.rest;
		} else {
			o->weights = wp.lin - wp.lin_scales;
			o->unquantised = wp.embed + wp.head + wp.rest;
		}
		o->quant = wp.lin_scales;
		o->dequant = wp.dequant;
		break;
	case FIT_FULL:
	case FIT_FREEZE:
		o->trainable =
		        j->task == FIT_FULL ? P : fmin(P, FIT_FREEZE_LAYERS * s->block_params);
		o->weights = P * w;
		o->gradients = o->trainable * g;
		o->optimizer = o->trainable * k;
		break;
	}
	if (j->task == FIT_INFER) {
		o->kv_cache = fit_kv_bytes(s, j->ctx, j->batch, fit_job_kv_value_bytes(j));
		o->activations = fit_infer_activations(s, j);
		if (fit_job_ggml(j) && !s->tied) { /* llama.cpp: the input layer on the CPU */
			if (wp.embed_quantised)
				o->weights -= wp.embed;
			else
				o->unquantised -= wp.embed;
			o->host += wp.embed;
		}
	} else if (j->task == FIT_LORA || j->task == FIT_QLORA) {
		/* adapters trained in fp32 (PEFT, LLaMA-Factory upcast them): 4 + 4 + moments;
		 * LLaMA-Factory's pure_bf16 leaves them in bf16 (cast_trainable_params_to_fp32),
		 * torchtune in the model's dtype */
		double ab =
		        j->pure16 || (j->trainer == FIT_TRAINER_TORCHTUNE && j->prec != FIT_FP32)
		                ? 2
		                : 4;

		o->trainable = j->lora_rank * s->lora_per_rank;
		o->adapters = o->trainable * ab;
		o->gradients = o->trainable * ab;
		o->optimizer = o->trainable * (j->optim == FIT_ADAMW        ? 2 * ab
		                               : j->optim == FIT_ADAMW_8BIT ? 2
		                                                            : ab);
	}
	if (train) {
		o->activations = fit_train_activations(s, j);
		o->logits = fit_train_logits(s, j);
		if (fit_job_checkpointing(j) && j->trainer == FIT_TRAINER_UNSLOTH)
			o->host += j->ctx * j->batch * s->hidden * stream_bytes(j) *
			           fmax(0, grad_layers(s, j) - FIT_OFFLOADED_CKPT_LAYERS) * n;
		struct fit_mem full = *o;

		stage = j->shard == FIT_FSDP ? 3 : (int)j->shard;
		if (stage >= 1)
			o->optimizer /= n;
		if (stage >= 2)
			o->gradients /= n;
		if (stage >= 3) {
			o->weights /= n;
			o->quant /= n;
			o->unquantised /= n;
			o->adapters /= n;
			o->gathered = gathered_bytes(s, j);
		}
		if (j->offload != FIT_OFFLOAD_NONE)
			apply_offload(s, j, o, stage, &full);
	} else if (n > 1) { /* tensor parallel */
		o->weights /= n;
		o->quant /= n;
		o->unquantised /= n;
		o->kv_cache /= n;
		o->activations /= n;
	}
	rest = o->weights + o->quant + o->unquantised + o->dequant + o->gradients + o->optimizer +
	       o->adapters + o->gathered + o->activations + o->logits + o->kv_cache;
	o->cuda = FIT_CUDA_CONTEXT;
	if (train) {
		double transient = o->activations + o->logits + o->dequant + o->gathered;

		o->framework =
		        transient * FIT_FRAMEWORK_TRAIN + (rest - transient) * FIT_FRAMEWORK_STATIC;
	} else if (!fit_job_ggml(j)) {
		double transient = o->activations + o->kv_cache + o->dequant;

		o->framework =
		        transient * FIT_FRAMEWORK_INFER + (rest - transient) * FIT_FRAMEWORK_STATIC;
	}
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
	double t = gpu_spec_cuda_total_bytes(g);

	/*
	 * What cudaMemGetInfo() calls total: NVML's total less the driver's reserve. The
	 * CUDA context is not taken off here: fit_memory() counts it (FIT_CUDA_CONTEXT), so
	 * that its total compares with what nvidia-smi shows a process using.
	 */
	if (isfinite(t) && t > 0)
		return t;
	return isfinite(g->mem_gib) && g->mem_gib > 0 ? g->mem_gib * 1073741824.0 : NAN;
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
	weights = fit_job_active_weight_bytes(s, j);
	kv = fit_kv_bytes(s, j->ctx, j->batch, fit_job_kv_value_bytes(j));
	o->bytes_per_step = weights + kv;
	o->decode_bound = bw / o->bytes_per_step;
	t_bw = o->bytes_per_step / (bw * FIT_BW_EFFICIENCY);
	t_flops = 2 * s->active * j->batch / (peak * FIT_MFU);
	step = isfinite(t_flops) ? fmax(t_bw, t_flops) : t_bw;
	o->decode = 1 / step;
	o->decode_total = j->batch / step;

	o->prefill = peak * FIT_MFU / (2 * s->active);
	if (j->task == FIT_FULL)
		o->flops_per_token = (fit_job_checkpointing(j) ? 8 : 6) * s->active;
	else if (j->task !=
	         FIT_INFER) /* no weight gradients: forward 2N, activation gradients 2N */
		o->flops_per_token = (fit_job_checkpointing(j) ? 6 : 4) * s->active;
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
