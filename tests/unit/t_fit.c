/*
 * gpuscope fit's formulas (src/fit/fit.c): each on hand-computed cases, and
 * the published rules of thumb and formulas of /work/shared/docs/llm-fit.md
 * (HF's Llama 3.1 table, accelerate's estimate, DeepSpeed's memory docs and
 * example outputs, the ZeRO paper, EleutherAI's Transformer Math 101,
 * Korthikanti et al.'s activation formula, Megatron-LM's code, LLaMA-Factory's
 * scaling rule, vLLM's and llama.cpp's KV-cache figures, the model cards'
 * GPU-hours) reproduced within a stated tolerance, with the reason for any
 * difference. Models and GPUs are built here by hand, not taken from the
 * catalog or the spec table.
 */
#include "harness.h"

#include <math.h>
#include <string.h>

#include "core/err.h"
#include "core/strbuf.h"
#include "fit/fit.h"
#include "fit/models.h"
#include "fit/quant.h"
#include "core/specs.h"

#define GIB 1073741824.0
#define MIB 1048576.0

/* Llama-2-7B from its config.json (llm-fit.md section 5). */
static void
llama2_7b_cfg(struct model_cfg *m)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->name, sizeof(m->name), "Llama-2-7B");
	snprintf(m->family, sizeof(m->family), "llama");
	m->layers = 32;
	m->hidden = 4096;
	m->heads = 32;
	m->kv_heads = 32;
	m->head_dim = 128;
	m->intermediate = 11008;
	m->vocab = 32000;
	m->max_ctx = 4096;
	m->params_published = 6.738e9;
	m->active_published = NAN;
}

/* The same as a struct fit_shape, by hand. */
static void
llama2_7b(struct fit_shape *s)
{
	memset(s, 0, sizeof(*s));
	s->params = s->active = 6.738e9;
	s->layers = 32;
	s->hidden = 4096;
	s->heads = 32;
	s->vocab = 32000;
	s->mlp_width = 11008;
	s->kv_per_token = 2 * 32 * 32 * 128; /* at 1 byte */
	s->embed_params = 32000.0 * 4096;
	s->block_params = (6.738e9 - 2 * s->embed_params) / 32;
	s->lora_per_rank = 19988480.0 / 8;
	s->max_ctx = 4096;
}

static void
test_bytes_per_weight(void)
{
	/* HF's Llama 3.1 blog table: 8B 16/8/4 GB, 70B 140/70/35, 405B 810/405/203 at
	 * bf16/int8/int4. HF rounds the counts to 8, 70 and 405 B; the cards give 8.03, 70.55
	 * and 405.85 B, so 1 % covers the rounding. The int4 column has no scales: ours are
	 * the separate quantisation line. */
	static const struct {
		double params, gb[3];
	} t[] = {
		{ 8.03e9, { 16, 8, 4 } },
		{ 70.55e9, { 140, 70, 35 } },
		{ 405.85e9, { 810, 405, 203 } },
	};
	static const enum fit_prec p[] = { FIT_BF16, FIT_INT8, FIT_INT4 };

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		for (int k = 0; k < 3; k++)
			is_dbl(t[i].params * fit_weight_bytes(p[k]) / 1e9, t[i].gb[k],
			       0.01 * t[i].gb[k],
			       "HF Llama 3.1 table: %.0f B at %s = %.0f GB (within 1 %%)",
			       t[i].params / 1e9, fit_prec_name(p[k]), t[i].gb[k]);
	is_dbl(fit_weight_bytes(FIT_FP32), 4, 0, "fp32: 4 bytes a weight");
	is_dbl(fit_weight_bytes(FIT_FP16), 2, 0, "fp16: 2 bytes");
	is_dbl(fit_weight_bytes(FIT_FP8), 1, 0, "fp8: 1 byte");
	/* accelerate estimate-memory: float16 = total/2, int8 = total/4, int4 = total/8 of fp32 */
	is_dbl(fit_weight_bytes(FIT_FP16) / fit_weight_bytes(FIT_FP32), 0.5, 0,
	       "accelerate: float16 is fp32/2");
	is_dbl(fit_weight_bytes(FIT_INT8) / fit_weight_bytes(FIT_FP32), 0.25, 0,
	       "accelerate: int8 is fp32/4");
	is_dbl(fit_weight_bytes(FIT_INT4) / fit_weight_bytes(FIT_FP32), 0.125, 0,
	       "accelerate: int4 is fp32/8");
	/* llm-fit.md section 0: Q4_0 = 4.5 bits per weight with its group scales */
	is_dbl(8 * fit_weight_bytes(FIT_INT4) + fit_quant_bits(FIT_INT4, FIT_INFER), 4.5, 1e-12,
	       "int4 with scales: Q4_0's 4.5 bits per weight");
	/* QLoRA paper: double quantisation brings the constants to 0.127 bits per parameter */
	is_dbl(fit_quant_bits(FIT_INT4, FIT_QLORA), 0.127, 0.0005,
	       "NF4 double-quantised: 0.127 bits");
	is_dbl(fit_quant_bits(FIT_BF16, FIT_INFER), 0, 0, "bf16: no quantisation constants");
	is_dbl(fit_kv_value_bytes(FIT_INT4), 2, 0, "KV cache stays 16-bit under int4 weights");
	is_dbl(fit_kv_value_bytes(FIT_FP8), 1, 0, "fp8 KV cache: 1 byte");
	{
		struct fit_job j;

		fit_job_init(&j);
		j.prec = FIT_FP8;
		is_dbl(fit_job_kv_value_bytes(&j), 2, 0,
		       "fp8 weights: the cache stays 16-bit (vLLM kv_cache_dtype auto)");
		j.kv_cache = fit_kv_find("fp8");
		is_dbl(fit_job_kv_value_bytes(&j), 1, 0, "unless --kv-cache fp8");
		j.kv_cache = -1;
		j.prec = FIT_FP32;
		is_dbl(fit_job_kv_value_bytes(&j), 4, 0, "an fp32 model's cache: 4 bytes");
	}
}

static void
test_states(void)
{
	double w, g, k;

	/* ZeRO paper: mixed-precision Adam, 2 + 2 + K with K = 12 = 16 bytes per parameter */
	fit_state_bytes(FIT_BF16, FIT_ADAMW, &w, &g, &k);
	is_dbl(w, 2, 0, "mixed precision: 2-byte weights");
	is_dbl(g, 2, 0, "mixed precision: 2-byte gradients");
	is_dbl(k, 12, 0, "mixed precision Adam: K = 12 (fp32 master, momentum, variance)");
	is_dbl(w + g + k, 16, 0, "mixed-precision AdamW: 16 bytes/param (ZeRO paper, DeepSpeed)");
	/* DeepSpeed: "16b for fp32: 4b params, 4b grads, 4b momentum and 4b variance" */
	fit_state_bytes(FIT_FP32, FIT_ADAMW, &w, &g, &k);
	is_dbl(w + g + k, 16, 0, "fp32 Adam: 16 bytes/param (DeepSpeed memory docs)");
	/* Transformer Math 101: bitsandbytes 8-bit AdamW 6 B/param, SGD+momentum 8 B/param
	 * (both with the fp32 master copy) */
	fit_state_bytes(FIT_BF16, FIT_ADAMW_8BIT, &w, &g, &k);
	is_dbl(k, 6, 0, "8-bit AdamW: 6 bytes/param of optimizer (Transformer Math 101)");
	fit_state_bytes(FIT_BF16, FIT_SGD, &w, &g, &k);
	is_dbl(k, 8, 0, "SGD with momentum: 8 bytes/param (Transformer Math 101)");
	fit_state_bytes(FIT_FP32, FIT_SGD, &w, &g, &k);
	is_dbl(k, 4, 0, "fp32 SGD: momentum only, 4 bytes/param");
}

static void
test_zero(void)
{
	const double P = 7.5e9, N = 64;
	/* DeepSpeed's t5-3b: 2851M params, largest layer the 32128 x 1024 embedding */
	const double t5 = 2851.6e6, t5l = 32128.0 * 1024;
	/* t5-large: 737.67M params, 32.90M largest layer, 4 GPUs */
	const double tl = 737.67e6, tll = 32.90e6;

	/* ZeRO paper example, Psi = 7.5B, N_d = 64: 120 GB, 31.4 GB, 16.6 GB, 1.9 GB (the
	 * paper rounds to 0.1 GB) */
	is_dbl(fit_zero_bytes(P, N, 0, 2, 2, 12) / 1e9, 120, 0.05, "ZeRO baseline: 120 GB");
	is_dbl(fit_zero_bytes(P, N, 1, 2, 2, 12) / 1e9, 31.4, 0.05, "ZeRO P_os: 31.4 GB");
	is_dbl(fit_zero_bytes(P, N, 2, 2, 2, 12) / 1e9, 16.6, 0.05, "ZeRO P_os+g: 16.6 GB");
	is_dbl(fit_zero_bytes(P, N, 3, 2, 2, 12) / 1e9, 1.9, 0.05, "ZeRO P_os+g+p: 1.9 GB");
	/* "GPT-2 1.5B: at least 24 GB of model states" */
	is_dbl(fit_zero_bytes(1.5e9, 1, 0, 2, 2, 12) / 1e9, 24, 1e-9, "GPT-2 1.5B: 24 GB");

	/* DeepSpeed's estimator prints GiB labelled GB, rounded to 0.01: tolerance 0.006.
	 * ZeRO-3 counts 18 bytes/param (fp32 gradients: w 2, g 4, K 12) plus 4 x the largest
	 * layer gathered. */
	is_dbl((4 * t5l + fit_zero_bytes(t5, 8, 3, 2, 4, 12)) / GIB, 6.10, 0.006,
	       "DeepSpeed ZeRO-3 t5-3b, 8 GPUs, no offload: 6.10 GB");
	is_dbl((4 * t5l + fit_zero_bytes(t5, 8, 3, 2, 0, 0)) / GIB, 0.79, 0.006,
	       "DeepSpeed ZeRO-3 t5-3b, optimizer offloaded: 0.79 GB");
	is_dbl(4 * t5l / GIB, 0.12, 0.006,
	       "DeepSpeed ZeRO-3 t5-3b, params and optimizer offloaded: "
	       "0.12 GB");
	/* ZeRO-2 as DeepSpeed counts it: 4 x params (fp16 weights and a full fp16 gradient
	 * buffer) + 16 x params / GPUs. Our stage-2 formula shards all gradients; DeepSpeed's
	 * estimator also keeps the 2-byte buffer whole: add it. */
	is_dbl((fit_zero_bytes(t5, 8, 2, 2, 4, 12) + 2 * t5) / GIB, 15.93, 0.006,
	       "DeepSpeed ZeRO-2 t5-3b, 8 GPUs, no offload: 15.93 GB (+ the whole fp16 gradient "
	       "buffer)");
	is_dbl(fit_zero_bytes(t5, 8, 2, 2, 0, 0) / GIB, 5.31, 0.006,
	       "DeepSpeed ZeRO-2 t5-3b, optimizer offloaded: 5.31 GB (2 x params)");
	/* DeepSpeed's ZeRO-3 t5-large example, in MiB labelled MB: 3291, 125, 477 */
	is_dbl((4 * tll + fit_zero_bytes(tl, 4, 3, 2, 4, 12)) / MIB, 3291, 1,
	       "DeepSpeed ZeRO-3 t5-large, 4 GPUs, case 1: 3291 MB");
	is_dbl(4 * tll / MIB, 125, 1, "DeepSpeed ZeRO-3 t5-large, case 2: 125 MB");
	is_dbl((4 * tll + fit_zero_bytes(tl, 4, 3, 2, 0, 0)) / MIB, 477, 1,
	       "DeepSpeed ZeRO-3 t5-large, case 3: 477 MB");
	/* Megatron theoretical_memory_usage.py: 18 bytes/param, or 6 + 12/DP with the
	 * distributed optimizer (= ZeRO-1 with fp32 gradients) */
	is_dbl(fit_zero_bytes(1, 1, 0, 2, 4, 12), 18, 0, "Megatron: 18 bytes/param");
	for (double dp = 2; dp <= 64; dp *= 4)
		is_dbl(fit_zero_bytes(1, dp, 1, 2, 4, 12), 6 + 12 / dp, 1e-12,
		       "Megatron distributed optimizer, DP %.0f: 6 + 12/DP", dp);
	/* LLaMA-Factory: full AMP 18x GB per x B params (fp32 gradients, Megatron's 18; our
	 * default keeps 2-byte gradients, 16); pure bf16 8x (bf16 Adam moments: 2 + 2 + 4) */
	is_dbl(fit_zero_bytes(1e9, 1, 0, 2, 4, 12) / 1e9, 18, 0, "LLaMA-Factory full AMP: 18x");
	is_dbl(fit_zero_bytes(1e9, 1, 0, 2, 2, 4) / 1e9, 8, 0, "LLaMA-Factory pure bf16: 8x");
}

static void
test_kv(void)
{
	struct fit_shape s;

	/* Transformer Math 101 / vLLM / llama.cpp: 2 L kv_heads head_dim bytes per token */
	is_dbl(fit_kv_gqa_per_token(32, 32, 128, 2), 524288, 0, "Llama-2-7B: 0.5 MB per token");
	/* vLLM: "up to 1.7GB for a single sequence in LLaMA-13B" (2048 tokens: 1.68 GB; the
	 * blog gives one decimal, so half a unit of it) */
	is_dbl(fit_kv_gqa_per_token(40, 40, 128, 2) * 2048 / 1e9, 1.7, 0.05,
	       "vLLM: LLaMA-13B 1.7 GB per 2048-token sequence (1.68, to one decimal)");
	/* llama.cpp's logs at n_ctx 2048, f16, exact */
	is_dbl(fit_kv_gqa_per_token(32, 8, 128, 2) * 2048 / MIB, 256, 0,
	       "llama.cpp: Llama-3-8B / Mixtral 256 MiB at 2048");
	is_dbl(fit_kv_gqa_per_token(80, 8, 128, 2) * 2048 / MIB, 640, 0,
	       "llama.cpp: Llama-3-70B 640 MiB at 2048");
	is_dbl(fit_kv_gqa_per_token(64, 8, 128, 2) * 2048 / MIB, 512, 0,
	       "llama.cpp: Qwen1.5-32B-class 64 x 8 x 128: 512 MiB at 2048");
	is_dbl(fit_kv_gqa_per_token(40, 64, 128, 2) * 2048 / MIB, 2560, 0,
	       "llama.cpp: c4ai-command-r-v01 (no GQA) 2560 MiB at 2048");
	is_dbl(fit_kv_gqa_per_token(32, 4, 128, 2) * 200000 / MIB, 12500, 0,
	       "llama.cpp: Yi-6B 12500 MB at -c 200000");
	is_dbl(fit_kv_gqa_per_token(60, 8, 128, 2) * 50000 / MIB, 11718.75, 0,
	       "llama.cpp: Yi-34B 11718.75 MB at -c 50000");
	/* llm-fit.md 3.7's derived table */
	is_dbl(fit_kv_gqa_per_token(28, 4, 128, 2), 57344, 0, "Qwen2.5-7B: 57,344 B/token");
	is_dbl(fit_kv_gqa_per_token(126, 8, 128, 2), 516096, 0, "Llama-3.1-405B: 516,096 B/token");
	is_dbl(fit_kv_gqa_per_token(42, 8, 256, 2), 344064, 0, "Gemma-2-9B: 344,064 B/token");
	is_dbl(fit_kv_mla_per_token(61, 512, 64, 2), 70272, 0,
	       "DeepSeek-V3 MLA latent: 70,272 B/token");
	/* ... where a naive MLA would cache 61 x 128 x (192 + 128) x 2 = 5.0 MB */
	ok(fit_kv_mla_per_token(61, 512, 64, 2) < 61 * 128 * 320 * 2 / 50.0,
	   "MLA's latent cache is 70x smaller than full K/V");

	/* sliding windows: Mistral-7B-v0.1, every layer windowed at 4096 */
	memset(&s, 0, sizeof(s));
	s.kv_per_token = fit_kv_gqa_per_token(32, 8, 128, 1);
	s.window = 4096;
	s.window_share = 1;
	is_dbl(fit_kv_bytes(&s, 32768, 1, 2), 131072.0 * 4096, 0,
	       "Mistral-7B-v0.1 at 32k: capped at the 4096 window (0.5 GiB, not 4)");
	is_dbl(fit_kv_bytes(&s, 2048, 3, 2), 131072.0 * 2048 * 3, 0,
	       "within the window: all of it");
	/* Gemma 2: every other layer global */
	s.kv_per_token = fit_kv_gqa_per_token(42, 8, 256, 1);
	s.window_share = 0.5;
	is_dbl(fit_kv_bytes(&s, 8192, 1, 2), 344064.0 * (4096 + 2048), 0,
	       "Gemma-2-9B at 8192: global layers 8192 tokens, local ones 4096");
	s.window = 0;
	is_dbl(fit_kv_bytes(&s, 8192, 2, 2), 344064.0 * 8192 * 2, 0, "no window: ctx x batch");
}

static void
test_activations(void)
{
	const double s = 2048, b = 1, h = 12288, a = 96, t = 8, sbh = s * b * h;
	struct fit_shape m;
	struct fit_job j;

	/* Korthikanti et al. Table 2, by hand for GPT-3 175B's shape at t = 8:
	 * 5as/(ht) = 5 x 96 x 2048 / (12288 x 8) = 10; 5as/h = 80 */
	is_dbl(fit_act_megatron(s, b, h, a, 1, false, FIT_RECOMPUTE_NONE), sbh * (34 + 80), 1,
	       "Megatron, no parallelism: sbh(34 + 5as/h)");
	is_dbl(fit_act_megatron(s, b, h, a, t, false, FIT_RECOMPUTE_NONE), sbh * 23, 1,
	       "Megatron, tensor parallel 8: sbh(10 + 24/t + 5as/(ht)) = 23 sbh");
	is_dbl(fit_act_megatron(s, b, h, a, t, true, FIT_RECOMPUTE_NONE), sbh * 114 / 8, 1,
	       "Megatron, tensor + sequence parallel: sbh/t (34 + 5as/h)");
	is_dbl(fit_act_megatron(s, b, h, a, t, true, FIT_RECOMPUTE_SELECTIVE), sbh * 34 / 8, 1,
	       "Megatron, selective recompute + SP: 34 sbh/t");
	is_dbl(fit_act_megatron(s, b, h, a, t, false, FIT_RECOMPUTE_SELECTIVE), sbh * 13, 1,
	       "Megatron code, selective without SP: sbh(10 + 24/t)");
	is_dbl(fit_act_megatron(s, b, h, a, t, true, FIT_RECOMPUTE_FULL), 2 * sbh, 0,
	       "full recompute: 2 sbh (layer input)");
	/* selective recomputation saves the 5as/h term: 114 -> 34 per sbh at t = 1 */
	is_dbl(fit_act_megatron(s, b, h, a, 1, false, FIT_RECOMPUTE_NONE) /
	               fit_act_megatron(s, b, h, a, 1, true, FIT_RECOMPUTE_SELECTIVE),
	       114.0 / 34, 1e-12, "selective recompute: 34 of 114 sbh kept for GPT-3's shape");
	/* Transformer Math 101: sbhL(10 + 24/t + 5as/(ht)) is Megatron's per layer x L */
	is_dbl(96 * fit_act_megatron(s, b, h, a, t, false, FIT_RECOMPUTE_NONE),
	       s * b * h * 96 * (10 + 24 / t + 5 * a * s / (h * t)), 1,
	       "Transformer Math 101's activation formula, 96 layers");
	/* Megatron's code form s b h (18 + 4 ffn/h) = 34 sbh at ffn = 4h; our gated MLP keeps
	 * four ffn-wide tensors (8 s b I): the same 34 sbh at I = 2h */
	is_dbl(fit_act_layer(s, b, h, 2 * h), 34 * sbh, 1,
	       "gated MLP at I = 2h: Megatron's 34 sbh with FlashAttention (no 5as/h)");
	is_dbl(fit_act_layer(4096, 1, 4096, 11008), 4096.0 * (18 * 4096 + 8 * 11008), 0,
	       "Llama-2-7B layer at 4096: s(18h + 8I)");

	/*
	 * The logits left activations for their own line (fit_train_logits): they were
	 * 6 bytes per token x vocab inside it; HF's ForCausalLMLoss holds 12 at its peak.
	 */
	llama2_7b(&m);
	fit_job_init(&j);
	j.task = FIT_FULL;
	j.ctx = 4096;
	is_dbl(fit_train_activations(&m, &j), 32 * fit_act_layer(4096, 1, 4096, 11008), 0,
	       "training activations: 32 layers (full, hf: no checkpointing by default)");
	is_dbl(fit_train_logits(&m, &j), 4096.0 * 32000 * 12, 0,
	       "logits: 12 bytes per token x vocab (HF ForCausalLMLoss)");
	j.checkpointing = true;
	is_dbl(fit_train_activations(&m, &j),
	       32 * 2 * 4096.0 * 4096 +
	               fmax(0, fit_act_layer(4096, 1, 4096, 11008) - 4096.0 * 32000 * 12),
	       0, "checkpointed: 2 sbh per layer + the recomputed layer beyond the logits");
	j.ctx = 512;
	j.batch = 1;
	m.vocab = 1000; /* a small vocabulary: the recomputed layer outgrows the logits */
	is_dbl(fit_train_activations(&m, &j),
	       32 * 2 * 512.0 * 4096 + fit_act_layer(512, 1, 4096, 11008) - 512.0 * 1000 * 12, 0,
	       "checkpointed, small vocabulary: the layer's excess over the logits counts");
	m.vocab = 32000;
	j.ctx = 4096;
	j.checkpointing = false;
	j.task = FIT_FREEZE;
	is_dbl(fit_train_activations(&m, &j), 2 * fit_act_layer(4096, 1, 4096, 11008), 0,
	       "freeze: only the 2 trained layers keep activations");
	j.task = FIT_FULL;
	j.prec = FIT_FP32;
	j.batch = 2;
	is_dbl(fit_train_activations(&m, &j), 2 * 2 * 32 * fit_act_layer(4096, 1, 4096, 11008), 0,
	       "fp32 and batch 2: four times as much");
	is_dbl(fit_train_logits(&m, &j), 2 * 4096.0 * 32000 * 12, 0,
	       "fp32 logits: the same 12 bytes (the .float() copy is the logits themselves)");
	j.prec = FIT_BF16;
	j.batch = 1;
	j.trainer = FIT_TRAINER_UNSLOTH;
	is_dbl(fit_train_logits(&m, &j), 4096.0 * 4096 * 6, 0,
	       "unsloth: fused linear cross-entropy, chunks: 6 bytes per token x hidden");
	ok(fit_job_checkpointing(&j), "unsloth checkpoints full fine-tuning too");
	is_dbl(fit_train_activations(&m, &j),
	       2 * 2 * 4096.0 * 4096 + fit_act_layer(4096, 1, 4096, 11008) - 4096.0 * 4096 * 6, 0,
	       "unsloth offloaded checkpoints: 2 layer inputs on the GPU");
}

static void
test_lora(void)
{
	struct model_cfg m;

	/* Llama-2-7B, rank 8 on q, k, v, o, gate, up, down: by hand, per layer 4 x 8 x (4096 +
	 * 4096) + 3 x 8 x (4096 + 11008) = 624,640; x 32 = 19,988,480 (what PEFT reports) */
	llama2_7b_cfg(&m);
	is_dbl(8 * fit_lora_per_rank(&m), 19988480, 0, "LoRA r8, all linear layers, Llama-2-7B");
	/* GQA: k and v are narrower (Llama-3-8B: 8 KV heads, I 14336) */
	m.kv_heads = 8;
	m.intermediate = 14336;
	is_dbl(fit_lora_per_rank(&m),
	       32 * (2 * (4096 + 4096) + 2 * (4096 + 1024) + 3 * (4096 + 14336.0)), 0,
	       "LoRA per rank with GQA");
	/* MoE: every expert's MLP (Mixtral: 8 experts of 14336) */
	m.experts = 8;
	m.experts_per_token = 2;
	is_dbl(fit_lora_per_rank(&m),
	       32 * (2 * (4096 + 4096) + 2 * (4096 + 1024) + 8 * 3 * (4096 + 14336.0)), 0,
	       "LoRA per rank, MoE: every expert");
}

static void
test_memory(void)
{
	struct fit_shape s;
	struct fit_job j;
	struct fit_mem m, m1;
	double P = 6.738e9, states;

	llama2_7b(&s);
	fit_job_init(&j);
	/* inference, hand computed */
	j.ctx = 2048;
	fit_memory(&s, &j, &m);
	is_dbl(m.weights, 2 * P, 0, "inference weights: 2 P");
	is_dbl(m.kv_cache, 524288.0 * 2048, 0, "inference KV: 0.5 MiB x 2048");
	is_dbl(m.activations, 2048.0 * (4 * 4096 + 3 * 11008) * 2 + 32000 * 4, 0,
	       "inference activations: one layer over the chunk, the last logits");
	is_dbl(m.cuda, 512 * MIB, 0, "CUDA context 512 MiB");
	/* issue 17: the allocator's share is 5 %% of what grows and shrinks (the cache and the
	 * activations), 2 %% of the weights loaded once (it was 5 %% of all) */
	is_dbl(m.total, (m.kv_cache + m.activations) * 1.05 + m.weights * 1.02 + 512 * MIB, 1,
	       "inference total: lines + 5 %% / 2 %% + CUDA context");
	/* accelerate / EleutherAI: inference "up to an additional 20%" over the weights. Ours
	 * depends on context and batch; at batch 1 and 2048 tokens it lands within 5 % of 1.2x */
	is_dbl(m.total / m.weights, 1.2, 0.06,
	       "accelerate's 1.2 x weights at batch 1, ctx 2048 (within 0.06)");
	ok(m.total / m.weights <= 1.25,
	   "and not above accelerate's 'up to 20 %%' (+ rounding) at short contexts");
	/* tensor parallel: weights and KV split */
	j.gpus = 4;
	fit_memory(&s, &j, &m1);
	is_dbl(m1.weights, m.weights / 4, 1, "tensor parallel 4: a quarter of the weights");
	is_dbl(m1.kv_cache, m.kv_cache / 4, 1, "and of the KV cache");
	is_dbl(m1.cuda, m.cuda, 0, "but a whole CUDA context on each");

	/* full fine-tuning, mixed precision AdamW: 16 P of states */
	fit_job_init(&j);
	j.task = FIT_FULL;
	fit_memory(&s, &j, &m);
	states = m.weights + m.gradients + m.optimizer;
	is_dbl(states / P, 16, 1e-9, "full fine-tuning: 16 bytes/param of model states");
	is_dbl(m.trainable, P, 0, "full: every parameter trained");
	/* ZeRO stages over 8 GPUs match the ZeRO paper's formulas */
	j.gpus = 8;
	for (int st = 1; st <= 3; st++) {
		j.shard = (enum fit_shard)st;
		fit_memory(&s, &j, &m);
		is_dbl(m.weights + m.gradients + m.optimizer, fit_zero_bytes(P, 8, st, 2, 2, 12), 1,
		       "ZeRO-%d over 8: the paper's per-GPU states", st);
	}
	is_dbl(m.gathered, 4 * fmax(s.block_params, s.embed_params), 0,
	       "ZeRO-3: 4 x the largest layer gathered (DeepSpeed)");
	j.shard = FIT_FSDP;
	fit_memory(&s, &j, &m1);
	is_dbl(m1.total, m.total, 1, "FSDP full sharding: as ZeRO-3");
	j.shard = FIT_SHARD_NONE;
	fit_memory(&s, &j, &m1);
	is_dbl(m1.weights + m1.gradients + m1.optimizer, 16 * P, 1,
	       "data parallel without sharding: all states on every GPU");

	/* freeze: the last 2 layers trained */
	fit_job_init(&j);
	j.task = FIT_FREEZE;
	fit_memory(&s, &j, &m);
	is_dbl(m.trainable, 2 * s.block_params, 0, "freeze: 2 layers trained");
	is_dbl(m.optimizer, 12 * 2 * s.block_params, 0, "freeze: optimizer for those only");

	/* LoRA and QLoRA against LLaMA-Factory's rule (x = billions of params): LoRA 2x GB,
	 * QLoRA-8bit x, QLoRA-4bit x/2, model states only. Our adapters (fp32, with their
	 * gradients and Adam, 16 bytes each: 0.3 GB at r8) and NF4 constants add a little. */
	fit_job_init(&j);
	j.task = FIT_LORA;
	fit_memory(&s, &j, &m);
	is_dbl(m.trainable, 19988480, 0, "LoRA r8: 20.0 M adapter params");
	is_dbl(m.adapters + m.gradients + m.optimizer, 16 * 19988480.0, 0,
	       "LoRA: 16 bytes per adapter param (fp32 weight, gradient, m, v)");
	states = m.weights + m.quant + m.adapters + m.gradients + m.optimizer;
	is_dbl(states / 1e9 / (P / 1e9), 2, 0.05, "LLaMA-Factory LoRA: 2x GB (within 2.5 %%)");
	j.task = FIT_QLORA;
	j.prec = FIT_INT4;
	fit_memory(&s, &j, &m);
	states = m.weights + m.quant + m.adapters + m.gradients + m.optimizer;
	is_dbl(states / P, 0.5, 0.07,
	       "LLaMA-Factory QLoRA-4bit: x/2 GB (+ 0.127-bit NF4 constants and adapters)");
	j.prec = FIT_INT8;
	fit_memory(&s, &j, &m);
	states = m.weights + m.quant + m.adapters + m.gradients + m.optimizer;
	is_dbl(states / P, 1, 0.05, "LLaMA-Factory QLoRA-8bit: x GB");
	j.optim = FIT_ADAMW_8BIT;
	fit_memory(&s, &j, &m1);
	is_dbl(m1.optimizer, 2 * 19988480.0, 0, "8-bit Adam on fp32 adapters: 2 bytes each");
}

static void
test_limits(void)
{
	struct fit_shape s;
	struct fit_job j;
	struct fit_mem m;
	double cap = 24e9, b, c;

	llama2_7b(&s);
	fit_job_init(&j);
	b = fit_max_batch(&s, &j, cap);
	j.batch = b;
	fit_memory(&s, &j, &m);
	ok(b >= 1 && m.total <= cap, "max batch %.0f fits in 24 GB", b);
	j.batch = b + 1;
	fit_memory(&s, &j, &m);
	ok(m.total > cap, "and one more does not");
	fit_job_init(&j);
	c = fit_max_ctx(&s, &j, cap, 0);
	j.ctx = c;
	fit_memory(&s, &j, &m);
	ok(c >= 1 && m.total <= cap, "max ctx %.0f fits in 24 GB", c);
	j.ctx = c + 1;
	fit_memory(&s, &j, &m);
	ok(m.total > cap, "and one token more does not");
	fit_job_init(&j);
	is_dbl(fit_max_ctx(&s, &j, cap, 4096), 4096, 0, "max ctx stops at the model's context");
	is_dbl(fit_max_batch(&s, &j, 10e9), 0, 0, "nothing fits in 10 GB: 0");
}

static struct gpu_spec
hand_gpu(double bw, double bf16, double tdp)
{
	struct gpu_spec g;

	memset(&g, 0, sizeof(g));
	g.name = "hand";
	g.vendor = "NVIDIA";
	g.mem_gib = 80;
	g.mem_bytes = NAN;
	g.mem_bw_gbs = bw;
	g.fp64 = g.fp64_tensor = g.tf32 = g.fp8 = g.int8 = g.fp4 = NAN;
	g.fp32 = bf16 / 16;
	g.fp16 = g.bf16 = bf16;
	g.tdp_w = tdp;
	return g;
}

static void
test_speed(void)
{
	struct fit_shape s;
	struct fit_job j;
	struct fit_speed sp;
	struct gpu_spec g = hand_gpu(1000, 312, 400);
	double bytes, viol = 0;

	llama2_7b(&s);
	fit_job_init(&j);
	j.ctx = 1000;
	fit_speed(&s, &j, &g, &sp);
	/* of the untied embedding matrix a step reads one row: it is left out (it was in) */
	bytes = 2 * (6.738e9 - 32000.0 * 4096) + 524288.0 * 1000;
	is_dbl(sp.bytes_per_step, bytes, 1,
	       "decode reads the weights but the embeddings, and the KV cache, once a step");
	is_dbl(sp.decode_bound, 1e12 / bytes, 1e-9, "bandwidth bound: BW / bytes per token");
	is_dbl(sp.decode, FIT_BW_EFFICIENCY * 1e12 / bytes, 1e-9, "decode at 70 %% of it");
	/* llm-fit.md section 0: 47-87 % of the bound for >= 13 GB of weights */
	{
		double eff = sp.decode / sp.decode_bound;

		ok(eff >= 0.47 && eff <= 0.87,
		   "decode reaches %.0f %% of the bound: within the measured 47-87 %%", 100 * eff);
	}
	is_dbl(sp.prefill, 312e12 * FIT_MFU / (2 * 6.738e9), 1e-6, "prefill: 2N FLOPs at the MFU");
	ok(isnan(sp.time_s), "no --tokens: no time");
	/* the bound holds for every batch, context, precision and GPU count */
	for (int p = FIT_FP32; p <= FIT_INT4; p++)
		for (double b = 1; b <= 256; b *= 4)
			for (double c = 128; c <= 131072; c *= 8)
				for (double n = 1; n <= 8; n *= 2) {
					j.prec = (enum fit_prec)p;
					j.batch = b;
					j.ctx = c;
					j.gpus = n;
					fit_speed(&s, &j, &g, &sp);
					if (!(sp.decode <= sp.decode_bound * (1 + 1e-12)) ||
					    !(sp.decode_total <= b * sp.decode_bound * (1 + 1e-12)))
						viol++;
				}
	is_dbl(viol, 0, 0, "decode never exceeds the bandwidth bound (864 cases)");
	/* compute-bound at large batches: decode_total stops at peak x MFU / 2N */
	fit_job_init(&j);
	j.batch = 4096;
	j.ctx = 16;
	fit_speed(&s, &j, &g, &sp);
	ok(sp.decode_total <= 312e12 * FIT_MFU / (2 * 6.738e9) * (1 + 1e-12),
	   "a large batch is bound by FLOPs");

	/* training: 6N per token (Transformer Math 101), 8N checkpointed, 4N adapters */
	fit_job_init(&j);
	j.task = FIT_FULL;
	j.tokens = 2e12;
	fit_speed(&s, &j, &g, &sp);
	is_dbl(sp.flops_per_token, 6 * 6.738e9, 0, "full training: 6N FLOPs per token");
	is_dbl(sp.train, 312e12 * FIT_MFU / (6 * 6.738e9), 1e-6, "tokens/s = peak x MFU / 6N");
	is_dbl(sp.time_s, 2e12 / sp.train, 1e-3, "time = tokens / rate");
	is_dbl(sp.energy_kwh, 400 * sp.time_s / 3.6e6, 1e-6, "energy = TDP x time");
	/* Llama 2 7B's card: 184,320 A100 GPU-hours for 2T tokens. At the 39 % MFU that implies
	 * (llm-fit.md 4.5) the 6ND formula gives the hours back within 1 %. */
	is_dbl(6 * 6.74e9 * 2e12 / (312e12 * 0.39) / 3600, 184320, 0.01 * 184320,
	       "Llama 2 7B: 6ND at 39 %% MFU of 312 TFLOPS = 184,320 GPU-hours (1 %%)");
	/* Llama 3.1 405B: 30.84M H100 GPU-hours, ~15T tokens, 33 % of 989 */
	is_dbl(6 * 405.85e9 * 15e12 / (989e12 * 0.33) / 3600, 30.84e6, 0.015 * 30.84e6,
	       "Llama 3.1 405B: 6ND at 33 %% MFU = 30.84 M GPU-hours (1.5 %%)");
	{
		/* what fit_speed ran at: the FLOPs it spends a second over the peak */
		double mfu = sp.train * sp.flops_per_token / 312e12;

		ok(mfu >= 0.33 && mfu <= 0.48,
		   "training runs at %.0f %% MFU: within the published 33-48 %%", 100 * mfu);
	}
	j.checkpointing = true;
	fit_speed(&s, &j, &g, &sp);
	is_dbl(sp.flops_per_token, 8 * 6.738e9, 0, "checkpointed: 8N (one more forward)");
	j.checkpointing = false;
	j.checkpointing_set = true; /* LoRA checkpoints by default now: ask for none */
	j.task = FIT_LORA;
	fit_speed(&s, &j, &g, &sp);
	is_dbl(sp.flops_per_token, 4 * 6.738e9, 0, "LoRA: 4N (no weight gradients)");
	/* LLaMA-Factory: LoRA 7B 2,392 tokens/s = 64 TFLOP/s at 4N (llm-fit.md 4.5) */
	is_dbl(2392 * 4 * 6.74e9 / 1e12, 64, 1,
	       "LLaMA-Factory LoRA 2,392 tok/s = 64 TFLOP/s at 4N");
	j.gpus = 4;
	j.task = FIT_FULL;
	fit_speed(&s, &j, &g, &sp);
	is_dbl(sp.train, 4 * 312e12 * FIT_MFU / (6 * 6.738e9), 1e-6, "4 GPUs: 4 times the rate");
	is_dbl(sp.energy_kwh, 4 * 400 * sp.time_s / 3.6e6, 1e-6, "and 4 GPUs' power");
	/* peak by precision */
	g.fp8 = 624;
	j.prec = FIT_FP8;
	is_dbl(fit_peak_tflops(&g, &j), 624, 0, "fp8 training: the fp8 peak");
	j.prec = FIT_FP32;
	is_dbl(fit_peak_tflops(&g, &j), 312 / 16.0, 0, "fp32: the fp32 peak");
	j.task = FIT_INFER;
	j.prec = FIT_INT4;
	is_dbl(fit_peak_tflops(&g, &j), 312, 0, "int4 weights compute in 16 bits");
	/* issue 17: the spec table's sizes are GiB as sold, no longer decimal GB */
	is_dbl(fit_spec_bytes(&g), 80 * GIB, 0, "memory: mem_gib GiB when mem_bytes is unknown");
	g.mem_bytes = 81559 * MIB; /* an H100 80GB's NVML total, its reserve by the rule */
	g.reserved_bytes = NAN;
	is_dbl(fit_spec_bytes(&g), gpu_spec_cuda_total_bytes(&g), 0,
	       "memory: NVML's total less the driver's reserve (the context is in the need)");
	ok(fit_spec_bytes(&g) < 81559 * MIB && fit_spec_bytes(&g) > 79 * GIB,
	   "an H100's CUDA total: %.2f GiB (vLLM logs 79.22)", fit_spec_bytes(&g) / GIB);
}

static void
test_check(void)
{
	struct fit_job j;
	struct err err = ERR_INIT;

#define BAD(field_set, what)                                                                   \
	do {                                                                                   \
		fit_job_init(&j);                                                              \
		field_set;                                                                     \
		err_clear(&err);                                                               \
		ok(fit_job_check(&j, &err) == E_USAGE && err.msg[0] && !strchr(err.msg, '\n'), \
		   "refused: %s (%s)", what, err.msg);                                         \
	} while (0)
	fit_job_init(&j);
	is_int(fit_job_check(&j, &err), 0, "the defaults are a job");
	BAD(j.ctx = 0, "ctx 0");
	BAD(j.ctx = -4096, "negative ctx");
	BAD(j.batch = 0, "batch 0");
	BAD(j.batch = -1, "negative batch");
	BAD(j.batch = 1.5, "half a sequence");
	BAD(j.gpus = 0, "--gpus 0");
	BAD(j.gpus = NAN, "gpus NaN");
	BAD((j.task = FIT_FULL, j.shard = FIT_ZERO3, j.gpus = 1), "ZeRO on one GPU");
	BAD(j.shard = FIT_FSDP, "sharding inference");
	BAD(j.checkpointing = true, "checkpointing inference");
	BAD((j.task = FIT_FULL, j.prec = FIT_INT4), "full training of int4 weights");
	BAD((j.task = FIT_LORA, j.prec = FIT_INT8), "lora on int8 (that is qlora)");
	BAD((j.task = FIT_QLORA, j.prec = FIT_BF16), "qlora on bf16 weights");
	BAD((j.task = FIT_LORA, j.lora_rank = 0), "LoRA rank 0");
	BAD(j.tokens = -1, "negative tokens");
	BAD((j.checkpointing = true, j.checkpointing_set = true), "--checkpointing inference");
	BAD(j.offload = FIT_OFFLOAD_OPTIMIZER, "offload in inference");
	BAD(j.pure16 = true, "pure bf16 inference");
	BAD((j.task = FIT_FULL, j.prec = FIT_FP32, j.pure16 = true), "pure bf16 on fp32");
	BAD((j.task = FIT_LORA, j.kv_cache = 0), "a KV-cache type in training");
	BAD(j.kv_cache = 99, "a KV-cache type out of the table");
	BAD(j.quant = 9999, "a format out of the table");
	BAD((j.task = FIT_QLORA, j.prec = FIT_INT4, j.quant = fit_quant_find("q4_k_m")),
	    "QLoRA on a GGUF file");
	BAD((j.task = FIT_FULL, j.prec = FIT_INT4, j.quant = fit_quant_find("awq")),
	    "full training of AWQ weights");
	BAD((j.quant = fit_quant_find("gptq"), j.prec = FIT_INT4, j.group_size = 0),
	    "GPTQ group size 0");
#undef BAD
	fit_job_init(&j);
	j.task = FIT_QLORA;
	j.prec = FIT_INT4;
	j.quant = fit_quant_find("gptq");
	is_int(fit_job_check(&j, &err), 0, "QLoRA on GPTQ weights: PEFT trains those");
	j.quant = -1;
	j.offload = FIT_OFFLOAD_ALL;
	j.checkpointing_set = true;
	is_int(fit_job_check(&j, &err), E_USAGE,
	       "--offload all without sharding: refused (only sharded parameters move)");
	j.shard = FIT_ZERO3; /* on one GPU: ZeRO-Offload's single-GPU use */
	is_int(fit_job_check(&j, &err), 0,
	       "--no-checkpointing and --offload all --zero 3 on one GPU in training");
	j.shard = FIT_SHARD_NONE;
	j.offload = FIT_OFFLOAD_NONE;
	is_int(fit_job_check(&j, &err), 0, "and with neither");
	is_int(fit_prec_parse("fp6"), -1, "unknown precision");
	is_int(fit_prec_parse("BF16"), FIT_BF16, "precision names ignore case");
	is_int(fit_prec_parse("bfloat16"), FIT_BF16, "bfloat16");
	is_int(fit_prec_parse("float16"), FIT_FP16, "float16");
	is_int(fit_task_parse("pretrain"), -1, "unknown task");
	is_int(fit_task_parse("qlora"), FIT_QLORA, "qlora");
	is_int(fit_optim_parse("adamw-8bit"), FIT_ADAMW_8BIT, "adamw-8bit");
	is_int(fit_optim_parse("lion"), -1, "unknown optimizer");
	is_str(fit_shard_name(FIT_FSDP), "fsdp", "shard names");
}

static void
test_shape(void)
{
	struct model_cfg m;
	struct fit_shape s;

	llama2_7b_cfg(&m);
	fit_shape_from_model(&m, &s);
	is_dbl(s.kv_per_token, 262144, 0, "shape: KV per token at 1 byte");
	is_dbl(s.lora_per_rank * 8, 19988480, 0, "shape: LoRA per rank");
	is_dbl(s.mlp_width, 11008, 0, "shape: dense MLP width");
	if (isfinite(model_params(&m)))
		is_dbl(s.params / 1e9, 6.738, 0.01, "shape: model_params() of Llama-2-7B");
	else
		skip("model_params() not written yet: the published count stands in");
	/* MoE: the tokens go through top-k experts */
	m.experts = 8;
	m.experts_per_token = 2;
	m.intermediate = 14336;
	fit_shape_from_model(&m, &s);
	is_dbl(s.mlp_width, 2 * 14336, 0, "shape: MoE MLP width = top-k x expert width");
	/* sliding windows: Gemma 2 alternates */
	llama2_7b_cfg(&m);
	m.sliding_window = 4096;
	m.sliding_every = 2;
	fit_shape_from_model(&m, &s);
	is_dbl(s.window_share, 0.5, 0, "Gemma-2-style: half the layers windowed");
	m.layers = 62; /* Gemma 3 27B: every 6th of 62 layers global, floor(62 / 6) = 10 */
	m.sliding_every = 6;
	fit_shape_from_model(&m, &s);
	is_dbl(s.window_share, 52.0 / 62, 1e-12, "Gemma-3-27B-style: 52 of 62 layers windowed");
	is_dbl(fit_kv_bytes(&s, 131072, 1, 2), model_kv_bytes(&m, 131072, 2), 1,
	       "and the KV cache at 128k is models.c's");
	m.layers = 32;
	m.sliding_every = 0;
	fit_shape_from_model(&m, &s);
	is_dbl(s.window_share, 1, 0, "Mistral-style: every layer windowed");
	/* MLA */
	llama2_7b_cfg(&m);
	m.kv_lora_rank = 512;
	m.qk_rope_head_dim = 64;
	if (!isfinite(model_kv_bytes_per_token(&m, 1)) || model_kv_bytes_per_token(&m, 1) <= 0) {
		fit_shape_from_model(&m, &s);
		is_dbl(s.kv_per_token, 32 * 576, 0, "MLA: the latent, without models.c");
	} else {
		fit_shape_from_model(&m, &s);
		is_dbl(s.kv_per_token, model_kv_bytes_per_token(&m, 1), 0,
		       "MLA: models.c's figure is used");
	}
}

static void
test_json(void)
{
	struct strbuf sb = STRBUF_INIT;
	struct fit_jw jw;

	fit_jw_begin(&jw, &sb);
	fit_jw_str(&jw, "schema", "x/1");
	fit_jw_open(&jw, "a", '[');
	fit_jw_open(&jw, NULL, '{');
	fit_jw_num(&jw, "n", 1.5, 2);
	fit_jw_num(&jw, "nan", NAN, 2);
	fit_jw_close(&jw, '}');
	fit_jw_close(&jw, ']');
	fit_jw_open(&jw, "e", '[');
	fit_jw_close(&jw, ']');
	fit_jw_bool(&jw, "b", true);
	fit_jw_end(&jw);
	is_str(sb.buf,
	       "{\n  \"schema\": \"x/1\",\n  \"a\": [\n    {\n      \"n\": 1.5,\n      \"nan\": "
	       "null\n    }\n  ],\n  \"e\": [],\n  \"b\": true\n}\n",
	       "the JSON writer: one key per line, commas, empty arrays, null");
	strbuf_release(&sb);
}

/* A Llama-style model_cfg by hand, from its config.json values. */
static void
llama_cfg(struct model_cfg *m, double L, double h, double heads, double kv, double inter,
          double vocab)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->family, sizeof(m->family), "llama");
	m->layers = L;
	m->hidden = h;
	m->heads = heads;
	m->kv_heads = kv;
	m->head_dim = h / heads;
	m->intermediate = inter;
	m->vocab = vocab;
	m->max_ctx = 1 << 20;
	m->params_published = NAN;
	m->active_published = NAN;
}

/* An NVIDIA card as NVML reports it, its driver's reserve by specs.c's rule. */
static struct gpu_spec
nvml_gpu(double nvml_mib)
{
	struct gpu_spec g = hand_gpu(1000, 312, 400);

	g.mem_gib = ceil(nvml_mib / 1024);
	g.mem_bytes = nvml_mib * MIB;
	g.reserved_bytes = NAN;
	return g;
}

static void
test_defaults(void)
{
	struct fit_job j;

	fit_job_init(&j);
	j.task = FIT_QLORA;
	ok(fit_job_checkpointing(&j), "qlora: checkpointing on (prepare_model_for_kbit_training)");
	j.task = FIT_LORA;
	ok(fit_job_checkpointing(&j), "lora: on (PEFT / TRL recipes)");
	j.task = FIT_FULL;
	ok(!fit_job_checkpointing(&j), "full, hf: off (TrainingArguments' default)");
	j.trainer = FIT_TRAINER_LLAMA_FACTORY;
	ok(fit_job_checkpointing(&j),
	   "full, llama-factory: on (disable_gradient_checkpointing=False)");
	j.checkpointing_set = true;
	j.checkpointing = false;
	ok(!fit_job_checkpointing(&j), "--no-checkpointing wins");
	j.task = FIT_INFER;
	j.checkpointing = true;
	ok(!fit_job_checkpointing(&j), "inference never checkpoints");
}

/* torchtune's recipes: bf16 throughout, chunked cross-entropy, no upcast */
static void
test_torchtune(void)
{
	struct fit_shape s;
	struct fit_job j;
	struct fit_mem m;
	double w, g, k;

	llama2_7b(&s);
	fit_job_init(&j);
	j.task = FIT_FULL;
	j.trainer = FIT_TRAINER_TORCHTUNE;
	ok(fit_job_checkpointing(&j), "torchtune: checkpointing on (its configs)");
	fit_job_state_bytes(&j, &w, &g, &k);
	is_dbl(w + g + k, 8, 0, "torchtune full: bf16 weights, gradients, AdamW moments");
	is_dbl(fit_train_logits(&s, &j), 4096.0 * 32000 * 6.5, 0,
	       "CEWithChunkedOutputLoss: 2 + 4 + 4/8 bytes per token x vocab");
	/* torch.compile: the fused loss keeps the 16-bit logits, the gradient made a chunk at a
	 * time */
	j.compile = true;
	is_dbl(fit_train_logits(&s, &j), 4096.0 * 32000 * (2 + 6.0 / 8), 0,
	       "torchtune, compiled: 2 + (4 + 2)/8 bytes per token x vocab");
	j.trainer = FIT_TRAINER_HF;
	is_dbl(fit_train_logits(&s, &j), 4096.0 * 32000 * 8, 0,
	       "Transformers' loss, compiled: 2 + 4 + 2 bytes per token x vocab");
	j.trainer = FIT_TRAINER_UNSLOTH;
	is_dbl(fit_train_logits(&s, &j), 4096.0 * 4096 * 6, 0,
	       "unsloth's fused loss is what it is, compiled or not");
	j.trainer = FIT_TRAINER_TORCHTUNE;
	j.compile = false;
	j.task = FIT_QLORA;
	j.prec = FIT_INT4;
	ok(!fit_job_upcasts(&j), "torchtune QLoRA keeps the embeddings bf16");
	fit_memory(&s, &j, &m);
	is_dbl(m.adapters, 2 * m.trainable, 0, "and the adapters bf16");
	j.prec = FIT_FP32;
	j.task = FIT_FULL;
	fit_job_state_bytes(&j, &w, &g, &k);
	is_dbl(w + g + k, 16, 0, "an fp32 model: fp32 states");
}

/*
 * Pure 16-bit training and CPU offload: LLaMA-Factory's rule and DeepSpeed's
 * estimators (llm-fit.md 3.8: t5-3b, 2851 M params, 32 M largest layer,
 * one node of 8 GPUs; t5-large 737.67 M, 32.90 M, 4 GPUs), which print GiB
 * labelled GB to 0.01.
 */
static void
test_offload(void)
{
	struct fit_shape s;
	struct fit_job j;
	struct fit_mem m;
	/* t5-3b's largest layer, the shared embedding 32128 x 1024 = 32.9 M ("32M" printed) */
	double t5 = 2851e6, t5l = 32128.0 * 1024, gpu, cpu, w, g, k;

	fit_job_init(&j);
	j.task = FIT_FULL;
	j.pure16 = true;
	fit_job_state_bytes(&j, &w, &g, &k);
	is_dbl(w + g + k, 8, 0, "pure bf16 AdamW: 8 bytes/param (LLaMA-Factory's 8x GB)");
	j.optim = FIT_ADAMW_8BIT;
	fit_job_state_bytes(&j, &w, &g, &k);
	is_dbl(w + g + k, 6, 0, "pure bf16, 8-bit Adam: 6 bytes/param");

	fit_ds_zero2_bytes(t5, 8, 1, true, &gpu, &cpu);
	is_dbl(gpu / GIB, 5.31, 0.006, "estimate_zero2, offload_optimizer=cpu: 5.31 GB per GPU");
	is_dbl(cpu / GIB, 127.48, 0.1, "and 127.48 GB per CPU");
	fit_ds_zero2_bytes(t5, 8, 1, false, &gpu, &cpu);
	is_dbl(gpu / GIB, 15.93, 0.006, "estimate_zero2, none: 15.93 GB per GPU");
	fit_ds_zero3_bytes(t5, t5l, 8, 1, true, true, true, &gpu, &cpu);
	is_dbl(gpu / GIB, 0.12, 0.006, "estimate_zero3, params + optimizer offloaded: 0.12 GB");
	is_dbl(cpu / GIB, 71.71, 0.1, "and 71.71 GB per CPU (zero_init)");
	fit_ds_zero3_bytes(t5, t5l, 8, 1, true, true, false, &gpu, &cpu);
	is_dbl(cpu / GIB, 127.48, 0.1, "127.48 GB per CPU without zero_init");
	fit_ds_zero3_bytes(t5, t5l, 8, 1, false, true, true, &gpu, &cpu);
	is_dbl(gpu / GIB, 0.79, 0.006, "estimate_zero3, optimizer offloaded: 0.79 GB");
	is_dbl(cpu / GIB, 63.74, 0.1, "and 63.74 GB per CPU");
	fit_ds_zero3_bytes(t5, t5l, 8, 1, false, false, true, &gpu, &cpu);
	is_dbl(gpu / GIB, 6.10, 0.006, "estimate_zero3, none: 6.10 GB");
	is_dbl(cpu / GIB, 1.47, 0.006, "and 1.47 GB per CPU");
	fit_ds_zero3_bytes(737.67e6, 32.90e6, 4, 1, false, false, true, &gpu, &cpu);
	is_dbl(gpu / MIB, 3291, 3, "t5-large ZeRO-3 on 4 GPUs, case 1: 3291 MB");

	/* fit_memory under --offload: what leaves the GPU, what the host holds */
	llama2_7b(&s);
	fit_job_init(&j);
	j.task = FIT_FULL;
	j.gpus = 8;
	j.shard = FIT_ZERO3;
	j.offload = FIT_OFFLOAD_OPTIMIZER;
	fit_memory(&s, &j, &m);
	is_dbl(m.optimizer + m.gradients, 0, 0, "ZeRO-3 offload_optimizer: no states on the GPU");
	is_dbl(m.host, 6.738e9 * 16 * 1.5, 1, "host: 16 bytes x 1.5 per param (estimate_zero3)");
	is_dbl(m.weights, 6.738e9 * 2 / 8, 1, "the GPU keeps its shard of the 16-bit weights");
	j.offload = FIT_OFFLOAD_ALL;
	fit_memory(&s, &j, &m);
	is_dbl(m.weights, 0, 0, "offload all: no weights kept");
	is_dbl(m.host, 6.738e9 * 18 * 1.5, 1, "host: 18 bytes x 1.5 per param");
	ok(m.gathered > 0, "a layer gathered at a time");
	j.shard = FIT_ZERO2;
	j.offload = FIT_OFFLOAD_OPTIMIZER;
	fit_memory(&s, &j, &m);
	is_dbl(m.host, 6.738e9 * fmax(4 * 8, 16) * 1.5, 1,
	       "ZeRO-2 offload on 8 GPUs: max(4 x 8, 16) x 1.5 per param (estimate_zero2)");
	is_dbl(m.weights, 6.738e9 * 2, 1, "the GPU keeps the 16-bit weights (estimate_zero2: 2P)");
	j.shard = FIT_ZERO3;
	j.pure16 = true;
	j.optim = FIT_ADAMW_8BIT;
	fit_memory(&s, &j, &m);
	is_dbl(m.host, 6.738e9 * (2 + 2) * 1.5, 1,
	       "pure bf16, 8-bit Adam offloaded: its 2 + 2 bytes a param move, x 1.5");
	j.offload = FIT_OFFLOAD_PARAMS;
	j.pure16 = false;
	j.optim = FIT_ADAMW;
	fit_memory(&s, &j, &m);
	is_dbl(m.host, 6.738e9 * 2, 1, "params offloaded alone: the 16-bit weights in host memory");
	ok(m.optimizer > 0, "the optimizer's shard stays on the GPU");
	/* QLoRA under FSDP gathers NF4 layers, not 16-bit ones */
	fit_job_init(&j);
	j.task = FIT_QLORA;
	j.prec = FIT_INT4;
	j.gpus = 8;
	j.shard = FIT_FSDP;
	fit_memory(&s, &j, &m);
	is_dbl(m.gathered, 2 * s.embed_params * 4, 1,
	       "QLoRA FSDP: two units as stored, the largest the upcast fp32 embeddings");
	j.trainer = FIT_TRAINER_LLAMA_FACTORY; /* no upcast: an NF4 layer outweighs them */
	fit_memory(&s, &j, &m);
	ok(m.gathered < 2 * s.embed_params * 2 + 1 && m.gathered < 4 * s.block_params,
	   "and without the upcast, under DeepSpeed's 16-bit 4 x layer (%.0f MiB)",
	   m.gathered / MIB);
}

/*
 * Published measurements of the longest context that trains (QLoRA, rank
 * 32 on every linear layer, batch 1, A100 80GB: NVML 81920 MiB), from
 * unsloth.ai/blog/llama3-3 (2024-12-10, "Llama 3.3 (70B) max. context
 * length" and the Llama 3.1 (8B) text). HF + FA2 there is Transformers
 * 4.46-4.47, whose ForCausalLMLoss also kept a shifted fp32 copy of the
 * logits (14 bytes per token x vocab, we model today's 12): 20 % there,
 * 15 % for the rest (measurements). The optimizer is fit's default AdamW:
 * unsloth's notebooks use 8-bit AdamW (0.4-2.3 GB less), which the 70B
 * entries' margin covers.
 */
static void
test_measured_ctx(void)
{
	struct model_cfg mc;
	struct fit_shape s;
	struct fit_job j;
	struct gpu_spec a100 = nvml_gpu(81920), r4090 = nvml_gpu(24564);
	struct fit_mem m;
	double cap = fit_spec_bytes(&a100), c;

	llama_cfg(&mc, 80, 8192, 64, 8, 28672, 128256); /* Llama 3.3 70B */
	fit_shape_from_model(&mc, &s);
	fit_job_init(&j);
	j.task = FIT_QLORA;
	j.prec = FIT_INT4;
	j.lora_rank = 32;
	c = fit_max_ctx(&s, &j, cap, 0);
	is_dbl(c / 6916, 1, 0.15, "Llama 3.3 70B QLoRA, HF + FA2, 80 GB: %.0f tokens (6,916)", c);
	j.trainer = FIT_TRAINER_UNSLOTH;
	c = fit_max_ctx(&s, &j, cap, 0);
	is_dbl(c / 89389, 1, 0.15, "and with unsloth: %.0f tokens (89,389)", c);

	llama_cfg(&mc, 32, 4096, 32, 8, 14336, 128256); /* Llama 3.1 8B */
	fit_shape_from_model(&mc, &s);
	fit_job_init(&j);
	j.task = FIT_QLORA;
	j.prec = FIT_INT4;
	j.lora_rank = 32;
	c = fit_max_ctx(&s, &j, cap, 0);
	is_dbl(c / 28000, 1, 0.20, "Llama 3.1 8B QLoRA, HF + FA2, 80 GB: %.0f tokens (28,000)", c);
	j.trainer = FIT_TRAINER_UNSLOTH;
	c = fit_max_ctx(&s, &j, cap, 0);
	is_dbl(c / 342000, 1, 0.15, "and with unsloth: %.0f tokens (342,000)", c);
	j.trainer = FIT_TRAINER_HF;
	{
		struct gpu_spec g8 = nvml_gpu(8188); /* an 8 GB card */

		is_dbl(fit_max_ctx(&s, &j, fit_spec_bytes(&g8), 0), 0, 0,
		       "HF + FA2 on an 8 GB card: out of memory, as measured");
	}

	/* issue 17's headline: QLoRA of Llama-2-7B on an RTX 4090 at fit's defaults */
	llama2_7b_cfg(&mc);
	fit_shape_from_model(&mc, &s);
	fit_job_init(&j);
	j.task = FIT_QLORA;
	j.prec = FIT_INT4;
	fit_memory(&s, &j, &m);
	ok(m.total < fit_spec_bytes(&r4090),
	   "Llama-2-7B QLoRA at ctx 4096 fits an RTX 4090: %.2f of %.2f GiB", m.total / GIB,
	   fit_spec_bytes(&r4090) / GIB);
	ok(m.logits > 0 && m.unquantised > 0 && m.dequant > 0,
	   "with its logits, 16-bit leftovers and dequantisation workspace counted");
	j.checkpointing_set = true;
	fit_memory(&s, &j, &m);
	ok(m.total > fit_spec_bytes(&r4090) * 0.9,
	   "without checkpointing it needs %.2f GiB: the default decides", m.total / GIB);
}

int
main(void)
{
	test_bytes_per_weight();
	test_states();
	test_zero();
	test_kv();
	test_activations();
	test_lora();
	test_memory();
	test_limits();
	test_speed();
	test_check();
	test_defaults();
	test_torchtune();
	test_offload();
	test_measured_ctx();
	test_shape();
	test_json();
	return done_testing();
}
