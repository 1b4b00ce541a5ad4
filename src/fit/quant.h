/*
 * The weight formats and KV-cache types `gpuscope fit` knows by name:
 * llama.cpp's GGUF types with the mixture of block types llama-quantize
 * gives each tensor, AWQ and GPTQ with their group size, bitsandbytes NF4
 * and LLM.int8, FP8, NVFP4, MXFP4; and the KV-cache value types engines
 * offer. Each entry carries its source; fit_job_weight_bytes() (fit/fit.h)
 * turns an entry and a model's shape into bytes.
 */
#ifndef GPUSCOPE_QUANT_H
#define GPUSCOPE_QUANT_H

#include <stdbool.h>
#include <stddef.h>

#include "fit/fit.h"

/*
 * How a format picks a block type per tensor. GGUF types are mixtures
 * (llama.cpp src/llama-quant.cpp llama_tensor_get_type_impl): attn_v and
 * ffn_down get more bits in some layers, the output tensor Q6_K.
 */
enum fit_quant_mix {
	FIT_MIX_UNIFORM, /* every quantised tensor at bits */
	FIT_MIX_Q2_K,    /* attn_v Q4_K (GQA >= 4) or Q3_K, ffn_down and attn_output Q3_K */
	FIT_MIX_Q3_K_M,  /* attn_v Q5_K in the first 2 layers, else Q4_K; ffn_down Q5_K in the
	                    first 1/16, else Q4_K; attn_output Q4_K */
	FIT_MIX_Q4_K_S,  /* attn_v Q5_K in the first 4 layers; ffn_down Q5_K in the first 1/8 */
	FIT_MIX_K_M,     /* Q4_K_M, Q5_K_M: attn_v and ffn_down Q6_K where use_more_bits() */
};

struct fit_quant {
	const char *name;   /* as --precision takes it: "q4_k_m", "awq", "nf4" */
	enum fit_prec prec; /* the plain precision it belongs to (FIT_INT4, FIT_INT8, FIT_FP8) */
	double bits;        /* bits per weight of the quantised tensors, their scales included */
	double group_bits;  /* > 0: bits is 4 + group_bits / group size (AWQ, GPTQ: scale + zero) */
	double head_bits;   /* the LM head (output tensor); 16: left in 16 bits */
	double embed_bits;  /* the token embeddings; 16: left in 16 bits */
	double scale_bits;  /* of bits, those that are scales (the memory's "quant" line) */
	enum fit_quant_mix mix;
	bool gguf;        /* a llama.cpp type: norms f32, every 2-D tensor quantised */
	bool bnb;         /* bitsandbytes: nn.Linear only, dequantised per layer to 16 bits */
	const char *note; /* what it is, one line */
	const char *source;
};

/* Every format, in the order --help lists them. */
size_t fit_quants(const struct fit_quant **out);
/* The format s names (case-insensitive, '_' and '-' ignored: q4_k_m = Q4_K_M = q4km); -1 none. */
int fit_quant_find(const char *s);
/* Bits per quantised weight of q at group size group (AWQ, GPTQ; others ignore it). */
double fit_quant_weight_bits(const struct fit_quant *q, double group);

/* KV-cache value types (--kv-cache). */
struct fit_kv_type {
	const char *name;
	double bytes;        /* per value, block scales included (q8_0: 34 bytes per 32) */
	const char *engines; /* which engines offer it */
	const char *source;
};

size_t fit_kv_types(const struct fit_kv_type **out);
/* The type s names (case-insensitive: "fp8_e4m3", "fp8_e5m2" are fp8, "f16" fp16); -1 none. */
int fit_kv_find(const char *s);

/* llama.cpp's use_more_bits(): the layers of a Q4_K_M / Q5_K_M model given Q6_K. */
double fit_gguf_more_bits_layers(double layers);

/*
 * Bits of all of s's decoder-layer linear weights stored as q at group size
 * group (GGUF: the mixture per tensor; others: every one at the same bits),
 * and the bits per weight of its token embeddings and LM head.
 */
double fit_quant_linear_bits(const struct fit_quant *q, const struct fit_shape *s, double group);
double fit_quant_embed_bits(const struct fit_quant *q, const struct fit_shape *s);
double fit_quant_head_bits(const struct fit_quant *q);

#endif
