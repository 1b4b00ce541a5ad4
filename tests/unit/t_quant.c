/*
 * fit's weight formats and KV-cache types (src/fit/quant.c) and what
 * fit_job_weight_bytes() makes of them: names and aliases, the bits of
 * each format, and published file sizes reproduced from the model's shape
 * (llama.cpp's llama-quantize table for Llama-3-8B, TheBloke's GGUF files
 * of Llama-2-7B and Zephyr-7B). Models are built here by hand from their
 * config.json values, not taken from the catalog.
 */
#include "harness.h"

#include <math.h>
#include <string.h>

#include "fit/fit.h"
#include "fit/models.h"
#include "fit/quant.h"

#define GIB 1073741824.0

static void
llama_cfg(struct model_cfg *m, const char *name, double kv_heads, double inter, double vocab)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->name, sizeof(m->name), "%s", name);
	snprintf(m->family, sizeof(m->family), "llama");
	m->layers = 32;
	m->hidden = 4096;
	m->heads = 32;
	m->kv_heads = kv_heads;
	m->head_dim = 128;
	m->intermediate = inter;
	m->vocab = vocab;
	m->max_ctx = 8192;
	m->params_published = NAN;
	m->active_published = NAN;
}

static double
gguf_bytes(const struct fit_shape *s, const char *type)
{
	struct fit_job j;

	fit_job_init(&j);
	j.quant = fit_quant_find(type);
	j.prec = FIT_INT4;
	return fit_job_weight_bytes(s, &j);
}

static void
test_names(void)
{
	const struct fit_quant *q;
	const struct fit_kv_type *kv;
	size_t n = fit_quants(&q), nkv = fit_kv_types(&kv);
	static const char *const want[] = {
		"q2_k", "q3_k_m", "q4_0", "q4_k_s", "q4_k_m", "q5_0",  "q5_k_s", "q5_k_m", "q6_k",
		"q8_0", "awq",    "gptq", "nf4",    "fp8",    "nvfp4", "mxfp4",  "int8",   "int4"
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ok(fit_quant_find(want[i]) >= 0, "format %s is known", want[i]);
	for (size_t i = 0; i < n; i++)
		ok(q[i].source && *q[i].source && q[i].note && *q[i].note && q[i].bits > 0,
		   "%s has bits, a note and a source", q[i].name);
	is_int(fit_quant_find("Q4_K_M"), fit_quant_find("q4_k_m"), "Q4_K_M = q4_k_m");
	is_int(fit_quant_find("q4km"), fit_quant_find("q4_k_m"), "q4km = q4_k_m");
	is_int(fit_quant_find("Q4_K"), fit_quant_find("q4_k_m"), "llama-quantize: Q4_K is Q4_K_M");
	is_int(fit_quant_find("q4"), -1, "q4 names nothing");
	is_int(fit_quant_find(""), -1, "the empty name: none");
	is_int(fit_quant_find(NULL), -1, "NULL: none");
	is_int(fit_quant_find("q4_k_m_x"), -1, "a longer name: none");

	is_int((int)nkv, 5, "five KV-cache types");
	is_int(fit_kv_find("FP8_E5M2"), fit_kv_find("fp8"), "vLLM's fp8_e5m2 is fp8");
	is_int(fit_kv_find("f16"), fit_kv_find("fp16"), "llama.cpp's f16 is fp16");
	is_int(fit_kv_find("q5_1"), -1, "q5_1: not offered");
	is_dbl(kv[fit_kv_find("q8_0")].bytes, 34.0 / 32, 0, "q8_0 cache: 34 bytes per 32 values");
	is_dbl(kv[fit_kv_find("q4_0")].bytes, 18.0 / 32, 0, "q4_0 cache: 18 bytes per 32 values");
	is_dbl(kv[fit_kv_find("fp8")].bytes, 1, 0, "fp8 cache: 1 byte");
}

static void
test_bits(void)
{
	const struct fit_quant *q;

	fit_quants(&q);
	/* ggml-common.h: block_q4_0 = fp16 d + 16 bytes; block_q8_0 = fp16 d + 32 bytes */
	is_dbl(q[fit_quant_find("q4_0")].bits, 4.5, 0, "Q4_0: 18 bytes per 32 weights");
	is_dbl(q[fit_quant_find("q8_0")].bits, 8.5, 0, "Q8_0: 34 bytes per 32 weights");
	is_dbl(q[fit_quant_find("q6_k")].bits, 6.5625, 0, "Q6_K: 210 bytes per 256 weights");
	is_dbl(q[fit_quant_find("q4_k_m")].bits, 4.5, 0, "Q4_K: 144 bytes per 256 weights");
	/* AWQ / GPTQ: 4 + (16-bit scale + 4-bit zero) / group */
	is_dbl(fit_quant_weight_bits(&q[fit_quant_find("awq")], 128), 4 + 20.0 / 128, 1e-12,
	       "AWQ g128: 4.156 bits");
	is_dbl(fit_quant_weight_bits(&q[fit_quant_find("gptq")], 32), 4 + 20.0 / 32, 1e-12,
	       "GPTQ g32: 4.625 bits");
	is_dbl(fit_quant_weight_bits(&q[fit_quant_find("gptq")], 0), 4 + 20.0 / 128, 1e-12,
	       "GPTQ without a group size: the default 128");
	is_dbl(q[fit_quant_find("nf4")].bits, 4.127, 0.0005, "NF4 with double quantisation: 4.127");
	is_dbl(q[fit_quant_find("nvfp4")].bits, 4.5, 0, "NVFP4: an e4m3 scale per 16");
	is_dbl(q[fit_quant_find("mxfp4")].bits, 4.25, 0, "MXFP4: an e8m0 scale per 32");
	/* use_more_bits() over 32 layers: the first and last 4, and every third between */
	is_dbl(fit_gguf_more_bits_layers(32), 16, 0, "Q4_K_M: 16 of 32 layers get Q6_K");
	is_dbl(fit_gguf_more_bits_layers(80), 40, 0, "and 40 of 80 (10 + 10 + 20 between)");
	is_dbl(fit_gguf_more_bits_layers(0), 0, 0, "no layers: none");
	is_dbl(fit_gguf_more_bits_layers(NAN), 0, 0, "NAN layers: none");
}

/*
 * llama.cpp tools/quantize/quantize.cpp (commit 007dbbf3): the sizes of
 * Llama-3-8B's files per type, "G" being GiB (Q8_0's 7.96 G is 8.03 B
 * weights at 8.5 bits). Within 1 % (the file's metadata and tokenizer, the
 * rounding to two decimals).
 */
static void
test_llama3_sizes(void)
{
	static const struct {
		const char *type;
		double gib;
	} sizes[] = {
		{ "q2_k", 2.96 },   { "q3_k_m", 3.74 }, { "q4_0", 4.34 },   { "q4_k_s", 4.37 },
		{ "q4_k_m", 4.58 }, { "q5_0", 5.21 },   { "q5_k_s", 5.21 }, { "q5_k_m", 5.33 },
		{ "q6_k", 6.14 },   { "q8_0", 7.96 },
	};
	struct model_cfg m;
	struct fit_shape s;

	llama_cfg(&m, "Llama-3-8B", 8, 14336, 128256);
	fit_shape_from_model(&m, &s);
	is_dbl(s.params / 1e9, 8.03, 0.01, "Llama-3-8B: 8.03 B params from its shape");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		double got = gguf_bytes(&s, sizes[i].type) / GIB;

		ok(fabs(got / sizes[i].gib - 1) <= 0.01,
		   "Llama-3-8B %s: %.2f GiB, llama-quantize says %.2f (1 %%)", sizes[i].type, got,
		   sizes[i].gib);
	}
}

/*
 * Published files (Hugging Face, sizes in bytes as the hub lists them):
 * TheBloke/Llama-2-7B-GGUF llama-2-7b.Q4_K_M.gguf 4,081,004,224 and Q5_K_M
 * 4,783,156,928; TheBloke/zephyr-7B-beta-GGUF (Mistral-7B's shape) Q4_K_M
 * 4,368,438,976 and Q5_K_M 5,131,409,088 (2023-10). Within 2 %.
 */
static void
test_thebloke_sizes(void)
{
	struct model_cfg m;
	struct fit_shape s;
	double got;

	llama_cfg(&m, "Llama-2-7B", 32, 11008, 32000);
	fit_shape_from_model(&m, &s);
	got = gguf_bytes(&s, "q4_k_m");
	is_dbl(got / 4081004224.0, 1, 0.02, "Llama-2-7B Q4_K_M: %.3f GB, TheBloke's file 4.081",
	       got / 1e9);
	got = gguf_bytes(&s, "q5_k_m");
	is_dbl(got / 4783156928.0, 1, 0.02, "Llama-2-7B Q5_K_M: %.3f GB, TheBloke's file 4.783",
	       got / 1e9);
	llama_cfg(&m, "Mistral-7B", 8, 14336, 32000);
	fit_shape_from_model(&m, &s);
	got = gguf_bytes(&s, "q4_k_m");
	is_dbl(got / 4368438976.0, 1, 0.02, "Zephyr-7B Q4_K_M: %.3f GB, TheBloke's file 4.368",
	       got / 1e9);
	got = gguf_bytes(&s, "q5_k_m");
	is_dbl(got / 5131409088.0, 1, 0.02, "Zephyr-7B Q5_K_M: %.3f GB, TheBloke's file 5.131",
	       got / 1e9);
}

/* What bitsandbytes and the other non-GGUF formats leave in 16 bits. */
static void
test_unquantised(void)
{
	struct model_cfg m;
	struct fit_shape s;
	struct fit_job j;
	struct fit_mem mem;
	double emb = 128256.0 * 4096;

	llama_cfg(&m, "Llama-3-8B", 8, 14336, 128256);
	fit_shape_from_model(&m, &s);
	fit_job_init(&j);
	j.quant = fit_quant_find("awq");
	j.prec = FIT_INT4;
	fit_memory(&s, &j, &mem);
	ok(mem.unquantised >= 2 * emb * 2 && mem.unquantised < 2 * emb * 2 * 1.01,
	   "AWQ: embeddings and LM head stay fp16 (%.2f GiB)", mem.unquantised / GIB);
	is_dbl(mem.quant, s.linear_params * 20.0 / 128 / 8, 1, "AWQ g128: scales and zeros");
	is_dbl(mem.dequant, 2 * 4096.0 * 14336, 0, "AWQ: the largest layer dequantised (MLP)");
	/* plain --precision fp8 served: llm-compressor's FP8 checkpoint, lm_head left 16-bit */
	fit_job_init(&j);
	j.prec = FIT_FP8;
	fit_memory(&s, &j, &mem);
	ok(mem.unquantised >= 2 * emb * 2, "fp8 inference: embeddings and LM head in 16 bits");
	is_dbl(mem.weights, s.linear_params, 1, "and the linear layers at a byte each");
	j.task = FIT_FULL;
	ok(fit_job_quant(&j) == NULL, "fp8 training: the plain precision");
	fit_job_init(&j);
	j.quant = fit_quant_find("awq");
	j.prec = FIT_INT4;
	/* the Q4_K_M file holds everything: no 16-bit line */
	j.quant = fit_quant_find("q4_k_m");
	fit_memory(&s, &j, &mem);
	is_dbl(mem.unquantised, 0, 0, "GGUF: nothing left in 16 bits");
	is_dbl(mem.dequant, 0, 0, "GGUF: llama.cpp's quantised kernels, no workspace");
	is_dbl(mem.weights + mem.host, fit_job_weight_bytes(&s, &j), 1,
	       "GGUF: all in the weights line (and the host's embeddings)");

	/* QLoRA, NF4: the hf trainer's prepare_model_for_kbit_training makes them fp32 */
	fit_job_init(&j);
	j.task = FIT_QLORA;
	j.prec = FIT_INT4;
	fit_memory(&s, &j, &mem);
	ok(fit_job_upcasts(&j), "QLoRA with the hf trainer upcasts");
	ok(mem.unquantised >= 2 * emb * 4 && mem.unquantised < 2 * emb * 4 * 1.01,
	   "QLoRA (hf): embeddings and LM head in fp32, %.2f GiB", mem.unquantised / GIB);
	j.trainer = FIT_TRAINER_LLAMA_FACTORY;
	fit_memory(&s, &j, &mem);
	ok(!fit_job_upcasts(&j) && mem.unquantised < 2 * emb * 2 * 1.01,
	   "QLoRA (LLaMA-Factory): they stay bf16, %.2f GiB", mem.unquantised / GIB);
	j.trainer = FIT_TRAINER_HF;
	j.quant = fit_quant_find("gptq");
	ok(!fit_job_upcasts(&j), "PEFT does not upcast a GPTQ model");

	/* decode reads the layers and the head, not the embedding table */
	fit_job_init(&j);
	j.quant = fit_quant_find("q8_0");
	j.prec = FIT_INT8;
	is_dbl(fit_job_weight_bytes(&s, &j) - fit_job_active_weight_bytes(&s, &j), emb * 8.5 / 8, 1,
	       "Q8_0 decode: all but the token embeddings are read");
	j.kv_cache = fit_kv_find("q8_0");
	is_dbl(fit_job_kv_value_bytes(&j), 34.0 / 32, 0, "--kv-cache q8_0: 1.0625 bytes a value");
	j.kv_cache = -1;
	is_dbl(fit_job_kv_value_bytes(&j), 2, 0, "a GGUF model's cache: 16 bits by default");

	/* llama.cpp: token embeddings in host memory, its own allocator, ubatch 512 */
	ok(fit_job_ggml(&j), "a GGUF format runs under llama.cpp");
	fit_memory(&s, &j, &mem);
	is_dbl(mem.host, emb * 8.5 / 8, 1, "llama.cpp keeps the token embeddings on the CPU");
	is_dbl(mem.weights, fit_job_weight_bytes(&s, &j) - emb * 8.5 / 8, 1,
	       "and the rest on the GPU");
	is_dbl(mem.framework, 0, 0, "no caching allocator's share");
	is_dbl(mem.activations, 512 * (4 * 4096 + 3 * 14336) * 4.0 + 128256 * 4.0, 1,
	       "compute buffer: a 512-token micro-batch in f32, the last logits");
	fit_job_init(&j);
	j.ggml = true; /* --engine llama.cpp on an f16 file */
	fit_memory(&s, &j, &mem);
	is_dbl(mem.host, emb * 2, 1, "--engine llama.cpp, f16: the embeddings on the CPU too");
	j.ggml = false;
	fit_memory(&s, &j, &mem);
	is_dbl(mem.host, 0, 0, "other engines: all on the GPU");
	j.task = FIT_LORA;
	j.ggml = true;
	ok(!fit_job_ggml(&j), "training never runs under llama.cpp");
}

int
main(void)
{
	test_names();
	test_bits();
	test_llama3_sizes();
	test_thebloke_sizes();
	test_unquantised();
	return done_testing();
}
