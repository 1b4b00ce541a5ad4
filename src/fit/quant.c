/*
 * The weight formats and KV-cache types fit knows by name, each with its
 * source. Block sizes of the GGUF types are ggml's (ggml/src/ggml-common.h:
 * block_q4_0 is a half scale and 16 bytes of nibbles per 32 weights, 18
 * bytes; block_q4_K 144 bytes per 256; block_q6_K 210 per 256 ...); the
 * mixture each llama-quantize type gives the tensors of a model is in
 * llama.cpp src/llama-quant.cpp llama_tensor_get_type_impl() (ggml-org/llama.cpp
 * commit 007dbbf3fd17eefe9b47fee45f48f7ba5e62b714) and is applied by
 * fit_job_weight_bytes() in fit.c.
 */
#include "fit/quant.h"

#include <ctype.h>
#include <math.h>
#include <string.h>
#include <strings.h>

/* bits per weight of ggml's block types (bytes per block x 8 / weights per block) */
#define Q2_K_BITS (84.0 * 8 / 256)  /* 2.625 */
#define Q3_K_BITS (110.0 * 8 / 256) /* 3.4375 */
#define Q4_0_BITS (18.0 * 8 / 32)   /* 4.5 */
#define Q4_K_BITS (144.0 * 8 / 256) /* 4.5 */
#define Q5_0_BITS (22.0 * 8 / 32)   /* 5.5 */
#define Q5_K_BITS (176.0 * 8 / 256) /* 5.5 */
#define Q6_K_BITS (210.0 * 8 / 256) /* 6.5625 */
#define Q8_0_BITS (34.0 * 8 / 32)   /* 8.5 */

#define GGML_SRC                                                                                \
	"ggml-org/llama.cpp ggml/src/ggml-common.h (block sizes), src/llama-quant.cpp "         \
	"(tensor mixture), commit 007dbbf3; sizes checked against tools/quantize/quantize.cpp " \
	"(Llama-3-8B file sizes)"

/*
 * The output tensor of every GGUF type below Q8_0 is Q6_K (llama-quant.cpp:
 * "else if (new_type != GGML_TYPE_Q8_0) new_type = GGML_TYPE_Q6_K"); token
 * embeddings take the type's base block type unless tied to the output.
 */
static const struct fit_quant quants[] = {
	{ "q2_k", FIT_INT4, Q2_K_BITS, 0, Q6_K_BITS, Q2_K_BITS, 0, FIT_MIX_Q2_K, true, false,
	  "llama.cpp Q2_K mixture (2.625-bit blocks, attn_v / ffn_down Q3_K-Q4_K)", GGML_SRC },
	{ "q3_k_m", FIT_INT4, Q3_K_BITS, 0, Q6_K_BITS, Q3_K_BITS, 0, FIT_MIX_Q3_K_M, true, false,
	  "llama.cpp Q3_K_M mixture (3.44-bit blocks, attn_v / ffn_down / attn_output Q4_K+)",
	  GGML_SRC },
	{ "q4_0", FIT_INT4, Q4_0_BITS, 0, Q6_K_BITS, Q4_0_BITS, 0, FIT_MIX_UNIFORM, true, false,
	  "llama.cpp Q4_0 (a 16-bit scale per 32 weights: 4.5 bits), output Q6_K", GGML_SRC },
	{ "q4_k_s", FIT_INT4, Q4_K_BITS, 0, Q6_K_BITS, Q4_K_BITS, 0, FIT_MIX_Q4_K_S, true, false,
	  "llama.cpp Q4_K_S mixture (4.5-bit super-blocks, first layers' attn_v / ffn_down Q5_K)",
	  GGML_SRC },
	{ "q4_k_m", FIT_INT4, Q4_K_BITS, 0, Q6_K_BITS, Q4_K_BITS, 0, FIT_MIX_K_M, true, false,
	  "llama.cpp Q4_K_M mixture (Q4_K, half the layers' attn_v and ffn_down Q6_K)", GGML_SRC },
	{ "q5_0", FIT_INT4, Q5_0_BITS, 0, Q6_K_BITS, Q5_0_BITS, 0, FIT_MIX_UNIFORM, true, false,
	  "llama.cpp Q5_0 (5.5 bits), output Q6_K", GGML_SRC },
	{ "q5_k_s", FIT_INT4, Q5_K_BITS, 0, Q6_K_BITS, Q5_K_BITS, 0, FIT_MIX_UNIFORM, true, false,
	  "llama.cpp Q5_K_S (5.5-bit super-blocks), output Q6_K", GGML_SRC },
	{ "q5_k_m", FIT_INT4, Q5_K_BITS, 0, Q6_K_BITS, Q5_K_BITS, 0, FIT_MIX_K_M, true, false,
	  "llama.cpp Q5_K_M mixture (Q5_K, half the layers' attn_v and ffn_down Q6_K)", GGML_SRC },
	{ "q6_k", FIT_INT8, Q6_K_BITS, 0, Q6_K_BITS, Q6_K_BITS, 0, FIT_MIX_UNIFORM, true, false,
	  "llama.cpp Q6_K (6.5625 bits)", GGML_SRC },
	{ "q8_0", FIT_INT8, Q8_0_BITS, 0, Q8_0_BITS, Q8_0_BITS, 0, FIT_MIX_UNIFORM, true, false,
	  "llama.cpp Q8_0 (a 16-bit scale per 32 int8 weights: 8.5 bits)", GGML_SRC },
	/*
	 * AutoAWQ (casper-hansen/AutoAWQ awq/modules/linear/gemm.py WQLinear_GEMM): qweight
	 * packs eight 4-bit weights per int32, qzeros 4 bits and scales fp16 per group and
	 * output column; embeddings and lm_head stay fp16 (the quantizer skips lm_head).
	 */
	{ "awq", FIT_INT4, 4, 16 + 4, 16, 16, 16 + 4, FIT_MIX_UNIFORM, false, false,
	  "AWQ 4-bit, an fp16 scale and a 4-bit zero per group",
	  "casper-hansen/AutoAWQ awq/modules/linear/gemm.py (qweight, qzeros, scales), v0.2.9" },
	/*
	 * GPTQ (AutoGPTQ / GPTQModel QuantLinear, transformers' GPTQ integration): the same
	 * packing as AWQ plus g_idx, one int32 per input feature (32 / out_features bits per
	 * weight, under 0.01 bit: left out); lm_head not quantised by default.
	 */
	{ "gptq", FIT_INT4, 4, 16 + 4, 16, 16, 16 + 4, FIT_MIX_UNIFORM, false, false,
	  "GPTQ 4-bit, an fp16 scale and a 4-bit zero per group",
	  "AutoGPTQ/AutoGPTQ auto_gptq/nn_modules/qlinear/qlinear_cuda.py (qweight, qzeros, "
	  "scales, g_idx), v0.7.1" },
	/*
	 * bitsandbytes NF4 as QLoRA loads it (BitsAndBytesConfig bnb_4bit_use_double_quant):
	 * Params4bit blocksize 64, absmax quantised to 8 bits in blocks of 256 with one fp32
	 * scale each: 4 + 8/64 + 32/(64 x 256) bits. Linear4bit replaces nn.Linear only;
	 * transformers keeps the output embedding in 16 bits (get_keys_to_not_convert).
	 */
	{ "nf4", FIT_INT4, 4 + 8.0 / 64 + 32.0 / (64 * 256), 0, 16, 16,
	  8.0 / 64 + 32.0 / (64 * 256), FIT_MIX_UNIFORM, false, true,
	  "bitsandbytes NF4, blocks of 64, double-quantised scales",
	  "bitsandbytes-foundation/bitsandbytes bitsandbytes/nn/modules.py Params4bit "
	  "(blocksize 64, compress_statistics), functional.py quantize_4bit (nested blocksize "
	  "256), v0.45; Dettmers et al. 2023 (QLoRA) section 3" },
	/*
	 * FP8 checkpoints as vLLM serves them (llm-compressor FP8 / FP8_DYNAMIC schemes:
	 * per-tensor or per-channel fp32 scales, lm_head in the ignore list).
	 */
	{ "fp8", FIT_FP8, 8, 0, 16, 16, 0, FIT_MIX_UNIFORM, false, false,
	  "FP8 e4m3 weights, a per-tensor or per-channel scale, lm_head in 16 bits",
	  "vllm-project/llm-compressor examples/quantization_w8a8_fp8 (scheme FP8_DYNAMIC, "
	  "ignore [\"lm_head\"]), v0.4; vLLM docs features/quantization/fp8" },
	/*
	 * NVFP4: 4-bit e2m1 with an e4m3 scale per 16 weights and an fp32 scale per tensor
	 * (NVIDIA Blackwell), 4 + 8/16 bits; ModelOpt keeps lm_head in 16 bits.
	 */
	{ "nvfp4", FIT_INT4, 4 + 8.0 / 16, 0, 16, 16, 8.0 / 16, FIT_MIX_UNIFORM, false, false,
	  "NVFP4: e2m1 weights, an e4m3 scale per 16 and an fp32 scale per tensor",
	  "NVIDIA TensorRT Model Optimizer docs (NVFP4 quantization formats), 2025; NVIDIA "
	  "blog \"Introducing NVFP4\" 2025-06-24" },
	/* OCP Microscaling v1.0: blocks of 32 e2m1 weights sharing an e8m0 scale, 4 + 8/32 bits */
	{ "mxfp4", FIT_INT4, 4 + 8.0 / 32, 0, 16, 16, 8.0 / 32, FIT_MIX_UNIFORM, false, false,
	  "MXFP4: e2m1 weights, an e8m0 scale per 32",
	  "OCP Microscaling Formats (MX) Specification v1.0, 2023-09, section 5 (MXFP4)" },
	/*
	 * bitsandbytes LLM.int8 (Linear8bitLt): Int8Params CB int8 and one fp32 SCB per output
	 * row, 8 + 32/in_features bits (left out: under 0.01 bit); outliers are taken from the
	 * 16-bit input at run time, not stored.
	 */
	{ "int8", FIT_INT8, 8, 0, 16, 16, 0, FIT_MIX_UNIFORM, false, true,
	  "bitsandbytes LLM.int8: int8 weights, an fp32 scale per row",
	  "bitsandbytes-foundation/bitsandbytes bitsandbytes/nn/modules.py Int8Params / "
	  "Linear8bitLt, v0.45; Dettmers et al. 2022 (LLM.int8())" },
	/* a generic 4-bit format: a 16-bit scale per 32 weights (Q4_0, GPTQ group 32) */
	{ "int4", FIT_INT4, 4 + 16.0 / 32, 0, 16, 16, 16.0 / 32, FIT_MIX_UNIFORM, false, false,
	  "generic 4-bit, a 16-bit scale per 32 weights, embeddings and lm_head in 16 bits",
	  "ggml-org/llama.cpp ggml/src/ggml-common.h block_q4_0 (18 bytes per 32 weights)" },
};

#define NQUANTS (sizeof(quants) / sizeof(quants[0]))

size_t
fit_quants(const struct fit_quant **out)
{
	*out = quants;
	return NQUANTS;
}

/* a and b equal, case and '_', '-', '.' ignored */
static bool
same_name(const char *a, const char *b)
{
	for (;;) {
		while (*a == '_' || *a == '-' || *a == '.')
			a++;
		while (*b == '_' || *b == '-' || *b == '.')
			b++;
		if (!*a || !*b)
			return !*a && !*b;
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return false;
		a++;
		b++;
	}
}

int
fit_quant_find(const char *s)
{
	static const struct {
		const char *alias, *name;
	} aliases[] = {
		{ "q3_k", "q3_k_m" },   { "q4_k", "q4_k_m" },    { "q5_k", "q5_k_m" },
		{ "bnb4", "nf4" },      { "bnb-nf4", "nf4" },    { "bnb8", "int8" },
		{ "llm.int8", "int8" }, { "fp8_e4m3", "fp8" },   { "e4m3", "fp8" },
		{ "awq-int4", "awq" },  { "gptq-int4", "gptq" },
	};

	if (!s || !*s)
		return -1;
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (same_name(s, aliases[i].alias))
			s = aliases[i].name;
	for (size_t i = 0; i < NQUANTS; i++)
		if (same_name(s, quants[i].name))
			return (int)i;
	return -1;
}

double
fit_quant_weight_bits(const struct fit_quant *q, double group)
{
	if (q->group_bits > 0)
		return 4 + q->group_bits / (isfinite(group) && group > 0 ? group : 128);
	return q->bits;
}

double
fit_gguf_more_bits_layers(double layers)
{
	/* use_more_bits(i, n): i < n/8 || i >= 7*n/8 || (i - n/8) % 3 == 2, integer division */
	long n = isfinite(layers) && layers > 0 && layers < 1e6 ? (long)layers : 0, count = 0;

	for (long i = 0; i < n; i++)
		if (i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2)
			count++;
	return (double)count;
}

double
fit_quant_linear_bits(const struct fit_quant *q, const struct fit_shape *s, double group)
{
	double L = s->layers > 0 ? s->layers : 1, lin = s->linear_params;
	double v = s->v_params, down = s->down_params, o = s->o_params;
	double base = fit_quant_weight_bits(q, group), vb = base, db = base, ob = base, k;

	if (!(lin > 0)) /* a shape by hand: what is left after the embeddings and LM head */
		lin = fmax(0, s->params - s->embed_params * (s->tied ? 1 : 2) - s->norm_params);
	if (!(v >= 0 && down >= 0 && o >= 0 && v + down + o <= lin))
		v = down = o = 0;
	/* llama_tensor_get_type_impl(): the per-tensor choices, as shares of the layers */
	switch (q->mix) {
	case FIT_MIX_UNIFORM:
		break;
	case FIT_MIX_Q2_K:
		vb = s->gqa >= 4 ? Q4_K_BITS : Q3_K_BITS;
		db = ob = Q3_K_BITS;
		break;
	case FIT_MIX_Q3_K_M: /* attn_v: the first 2 Q5_K; ffn_down: the first n/16 Q5_K */
		k = fmin(2, L);
		vb = (k * Q5_K_BITS + (L - k) * Q4_K_BITS) / L;
		k = floor(L / 16);
		db = (k * Q5_K_BITS + (L - k) * Q4_K_BITS) / L;
		ob = Q4_K_BITS;
		break;
	case FIT_MIX_Q4_K_S: /* attn_v: the first 4 Q5_K; ffn_down: the first n/8 */
		k = fmin(4, L);
		vb = (k * Q5_K_BITS + (L - k) * base) / L;
		k = floor(L / 8);
		db = (k * Q5_K_BITS + (L - k) * base) / L;
		break;
	case FIT_MIX_K_M:
		k = fit_gguf_more_bits_layers(L);
		vb = db = (k * Q6_K_BITS + (L - k) * base) / L;
		break;
	}
	return base * (lin - v - down - o) + vb * v + db * down + ob * o;
}

double
fit_quant_embed_bits(const struct fit_quant *q, const struct fit_shape *s)
{
	/* llama.cpp quantises tied token embeddings as the output tensor */
	if (q->gguf && s->tied)
		return q->head_bits;
	return q->embed_bits;
}

double
fit_quant_head_bits(const struct fit_quant *q)
{
	return q->head_bits;
}

/*
 * KV-cache types. vLLM: --kv-cache-dtype auto | fp8 | fp8_e4m3 | fp8_e5m2, one byte per
 * value (per-tensor scales); llama.cpp: --cache-type-k / -v f16, q8_0, q4_0 in ggml's
 * blocks (q8_0 34 bytes per 32 values, q4_0 18 bytes per 32).
 */
static const struct fit_kv_type kv_types[] = {
	{ "fp16", 2, "all", "IEEE half" },
	{ "bf16", 2, "all", "bfloat16" },
	{ "fp8", 1, "vllm, sglang, trt-llm",
	  "vllm-project/vllm docs features/quantization/quantized_kvcache (fp8_e4m3, fp8_e5m2), "
	  "v0.8" },
	{ "q8_0", 34.0 / 32, "llama.cpp",
	  "ggml-org/llama.cpp ggml/src/ggml-common.h block_q8_0; tools/server --cache-type-k" },
	{ "q4_0", 18.0 / 32, "llama.cpp",
	  "ggml-org/llama.cpp ggml/src/ggml-common.h block_q4_0; tools/server --cache-type-k" },
};

#define NKV (sizeof(kv_types) / sizeof(kv_types[0]))

size_t
fit_kv_types(const struct fit_kv_type **out)
{
	*out = kv_types;
	return NKV;
}

int
fit_kv_find(const char *s)
{
	if (!s || !*s)
		return -1;
	if (same_name(s, "f16") || same_name(s, "float16") || same_name(s, "half") ||
	    same_name(s, "auto"))
		s = "fp16";
	else if (same_name(s, "bfloat16"))
		s = "bf16";
	else if (same_name(s, "fp8_e4m3") || same_name(s, "fp8_e5m2") || same_name(s, "e4m3") ||
	         same_name(s, "e5m2"))
		s = "fp8";
	for (size_t i = 0; i < NKV; i++)
		if (same_name(s, kv_types[i].name))
			return (int)i;
	return -1;
}
