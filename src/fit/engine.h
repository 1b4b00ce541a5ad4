/*
 * Serving engines for `gpuscope fit`: how fast a job decodes and prefills
 * under vLLM, SGLang, TensorRT-LLM, llama.cpp, transformers, gpt-fast or
 * ExLlamaV2 on a GPU, and how many sequences vLLM's KV cache holds. The
 * profiles (data/engines/engines.tsv, built into the binary) come from
 * published benchmarks; data/engines/README.md derives every figure.
 *
 * The model, per decode step of a batch of B sequences on n GPUs (tensor
 * parallel; each GPU reads 1/n of the weights and of the KV cache):
 *
 *   t_step = step_us + layers x layer_us                  fixed: launches, sampling
 *          + MoE layers x k x moe_expert_us               routing, fused-MoE kernels
 *          + max(t_mem, t_flops) + min(t_mem, t_flops)^2 / max(t_mem, t_flops)
 *          + 2 x layers x allreduce(B x hidden x 2 bytes)  TP only
 *   t_mem = bytes / (bw_eff x bw), t_flops = 2 x active x B / (mfu_decode x peak)
 *
 * (reading and computing overlap when one dominates and add up when they are
 * even: at batch 1 the flops hide behind the reading; SGLang's batch-128
 * decode of Llama-3-8B on an H100, where they are close, takes about their
 * sum, data/engines/README.md)
 *
 * bytes = the weights a step touches as stored (fit_job_active_weight_bytes();
 * MoE at batch B: engine_moe_read_share() of the routed experts) + every
 * sequence's KV cache; flops = 2 x active x B. The fixed term is why small
 * quantised models reach a lower share of the bandwidth bound: a 4 GB model
 * on a 1 TB/s card has 4 ms of reading and a few ms of per-kernel overhead.
 * The all-reduce (ring, nccl-tests' busbw convention) costs
 * link_lat_us + 2 (n-1)/n x bytes / link bandwidth, so 8-way TP is not 8x.
 * An engine that splits the layers across GPUs (llama.cpp's default) runs
 * them one GPU after the other: n = 1 for speed, no all-reduce.
 * Prefill: tokens/s = mfu_prefill (mfu_prefill_q for weight-only int8 / int4
 * formats) x peak (16-bit; FP8 jobs FP8, FP32 FP32)
 * x n / (2 x active + attn_cost x 2 x layers x hidden x ctx), the second
 * term the causal attention of a ctx-token prompt (attn_cost > 1 where the
 * engine materialises the attention matrix), less its all-reduces.
 *
 * MoE: at batch B each layer reads E x (1 - (1 - k/E)^B) of its E routed
 * experts (k per token, uniform routing), plus the shared experts and
 * attention: batch > 1 reads more than the active weights, up to all of them.
 *
 * Serving capacity, as vLLM (v0.6.5 to v0.20: the worker's
 * determine_available_memory) allocates it, per GPU:
 *   pool = gpu_memory_utilization x total memory as CUDA reports it
 *        - weights / n
 *        - the profile run's activation peak: the larger of the forward over
 *          max_num_batched_tokens tokens and the sampler over max_num_seqs
 *          sequences' logits
 *        - non-torch memory (cuBLAS workspaces, NCCL buffers under TP)
 *   (CUDA graphs, captured after the pool is sized before v0.21, are not
 *   taken off). SGLang (engine "sglang"): pool = mem_fraction_static (here
 *   gpu_memory_utilization) x total - weights / n - the CUDA context, in
 *   pages of one token.
 *   blocks = floor(pool / (block_size x kv bytes per token / n))
 *     (a GPU keeps kv_heads / n of the KV heads, at least one; an MLA
 *     latent cache is whole on every GPU)
 *   kv_cache_tokens = blocks x block_size ("GPU KV cache size: N tokens")
 *   concurrency = kv_cache_tokens / ctx ("Maximum concurrency for N tokens
 *   per request: X"); the batch: whole sequences of ctx tokens, capped at
 *   max_num_seqs; the aggregate decode is this engine's at that batch.
 * Not modelled: prefix caching, speculative decoding, chunked-prefill
 * interference with decode, vLLM's hybrid allocator for sliding windows
 * (windowed layers count their window per sequence, not per block pool).
 *
 * Sizes bytes, rates per second, bandwidth GB/s (1e9), TFLOPS 1e12.
 */
#ifndef GPUSCOPE_ENGINE_H
#define GPUSCOPE_ENGINE_H

#include <stdbool.h>
#include <stddef.h>

struct err;
struct fit_job;
struct fit_shape;
struct gpu_spec;
struct model_cfg;

/* One row of data/engines/engines.tsv: an engine on one GPU architecture ("any": the rest). */
struct engine_profile {
	const char *name;    /* canonical: "vllm", "llama.cpp" */
	const char *aliases; /* '|'-separated other names ("ollama"), "" none */
	const char *arch; /* as the spec table names it ("Hopper", "Ampere/datacenter"), or "any" */
	bool common;      /* one of the engines of the range shown without --engine */
	double bw_eff;    /* share of peak bandwidth reached while streaming weights and KV */
	double step_us;   /* fixed per decode step: scheduler, sampling, detokenising */
	double layer_us;  /* fixed per layer per step: kernel launches and tails */
	double moe_expert_us; /* more per routed expert of a token per MoE layer: fused-MoE kernels
	                       */
	bool layer_split;     /* multi-GPU by layers, one GPU after the other (llama.cpp), not TP */
	double mfu_decode; /* share of peak reached when a large batch makes decode compute bound */
	double mfu_prefill;   /* share of peak dense FLOPS reached in prefill */
	double mfu_prefill_q; /* the same with weight-only int8 / int4 weights (GGUF, AWQ, GPTQ) */
	double attn_cost;     /* prefill attention's cost over its flops at mfu_prefill (1:
	                         FlashAttention) */
	const char *version;  /* engine version and date the figures come from */
	const char *source;   /* short; the derivation is in data/engines/README.md */
};

/* Every row, in table order (parsed on first use; none when the table is malformed: see below). */
size_t engine_profiles(const struct engine_profile **out);
/*
 * Whether the built-in table is well formed: 0, or E_PARSE with err naming
 * data/engines/engines.tsv, the line and what is wrong. engine_parse() does
 * the same for any text (the tests feed it broken tables).
 */
int engine_table_check(struct err *err);
int engine_parse(const char *text, size_t len, const char *file, struct engine_profile **rows,
                 size_t *nr, struct err *err);
void engine_free(struct engine_profile *rows, size_t nr);

/* The canonical name of an engine name or alias (case-insensitive; "ollama" -> "llama.cpp"); NULL
 * none. */
const char *engine_canonical(const char *name);
/* The "name, name, ..." list of engines, for a usage message. */
const char *engine_names(void);
/* The profile of engine name on arch (its row for arch, else its "any" row); NULL none. */
const struct engine_profile *engine_find(const char *name, const char *arch);
/* The same for GPU g: its "arch/kind" row ("Ampere/datacenter"), else arch, else "any". */
const struct engine_profile *engine_find_gpu(const char *name, const struct gpu_spec *g);
/* The common engines (canonical names), in table order. */
size_t engine_common(const char *const **names);

/* What the caller knows of the machine and the serving setup; engine_opts_init() gives defaults. */
struct engine_opts {
	double link_gbs; /* between tensor-parallel GPUs, per GPU per direction; NAN: by generation
	                  */
	double link_lat_us; /* all-reduce latency; NAN: by link kind */
	double bw_gbs; /* measured bandwidth (gpuscope bench) instead of the sheet's; NAN: sheet */
	double peak_tflops; /* measured FLOPS at the job's precision instead of the sheet's; NAN:
	                       sheet */
	double experts, experts_per_token, shared_experts; /* MoE; experts 0 dense */
	double dense_layers;  /* MoE: the first layers that are dense (DeepSeek-V3: 3) */
	double routed_params; /* parameters of all routed experts, all layers; NAN: from the shape
	                       */
	double kv_heads;      /* KV heads (0 unknown): a GPU holds at least one under TP */
	bool mla;             /* latent KV cache (DeepSeek MLA): every TP rank holds all of it */
	/* vLLM */
	double gpu_memory_utilization; /* 0.9 */
	double block_size;             /* 16 tokens */
	double max_num_seqs; /* NAN: vLLM's default for the GPU (1024 on >= 70 GiB but A100, else
	                        256) */
	double max_num_batched_tokens; /* profile run; NAN: vLLM's default (8192 on >= 70 GiB but
	                                  A100, else 2048) */
};
void engine_opts_init(struct engine_opts *o);
/* The MoE fields of o from m (experts, top-k, shared experts, routed parameters). */
void engine_opts_from_model(struct engine_opts *o, const struct model_cfg *m);

/* NVLink / PCIe bandwidth assumed between GPUs of g's kind (GB/s per direction) and its latency
 * (us). */
double engine_link_default_gbs(const struct gpu_spec *g, double n);
double engine_link_default_lat_us(const struct gpu_spec *g, double n);

/* Seconds of one ring all-reduce of bytes over n GPUs: lat + 2 (n-1)/n bytes / link; 0 when n <= 1.
 */
double engine_allreduce_s(double bytes, double n, double link_gbs, double lat_us);
/* Share of a layer's E routed experts that a batch of b tokens touches, k per token: 1 - (1 -
 * k/E)^b. */
double engine_moe_read_share(double experts, double k, double b);
/* Weight bytes one decode step of batch b reads (all GPUs together): dense = active; MoE more. */
double engine_step_weight_bytes(const struct fit_shape *s, const struct fit_job *j,
                                const struct engine_opts *o, double b);

struct engine_speed {
	const char *engine;                     /* canonical name */
	const char *arch;                       /* the profile row's arch ("any" or the GPU's) */
	double bw_gbs, peak_tflops;             /* one GPU, as used (measured or sheet) */
	double weight_bytes;                    /* read per step, all GPUs */
	double kv_bytes;                        /* read per step, all sequences, all GPUs */
	double t_fixed, t_mem, t_flops, t_comm; /* seconds of one decode step, by cause */
	double decode;                          /* tokens/s per sequence at j->batch */
	double decode_total;                    /* tokens/s, all sequences */
	double decode_bound; /* per sequence at 100 % of bandwidth, no overhead */
	double prefill;      /* tokens/s, all GPUs, a ctx-token prompt */
};
/* Speeds of j on j->gpus of g under e (tensor parallel over the GPUs); b = j->batch. */
void engine_speed(const struct engine_profile *e, const struct fit_shape *s,
                  const struct fit_job *j, const struct gpu_spec *g, const struct engine_opts *o,
                  struct engine_speed *out);

/*
 * The range over the common engines for g's arch: decode low/high (per
 * sequence) and prefill low/high, each with the engine that gives it, and the
 * middle (geometric mean of low and high).
 */
struct engine_range {
	double decode_low, decode_high, decode_mid;
	double decode_total_low, decode_total_high, decode_total_mid;
	double prefill_low, prefill_high, prefill_mid;
	const char *decode_low_engine, *decode_high_engine;
	const char *prefill_low_engine, *prefill_high_engine;
};
void engine_speed_range(const struct fit_shape *s, const struct fit_job *j,
                        const struct gpu_spec *g, const struct engine_opts *o,
                        struct engine_range *out);

/* Serving capacity as vLLM allocates it (see above); all per GPU but the token counts. */
struct engine_serving {
	double total_bytes;            /* one GPU, as CUDA reports it (mem_bytes, else mem_gb) */
	double budget_bytes;           /* gpu_memory_utilization x total */
	double weight_bytes;           /* per GPU */
	double activation_bytes;       /* profile run's peak */
	double non_torch_bytes;        /* CUDA context, NCCL, cuBLAS */
	double kv_pool_bytes;          /* what is left; <= 0: nothing (fits = false) */
	double block_bytes;            /* one block of block_size tokens, per GPU */
	double blocks;                 /* "# GPU blocks" */
	double kv_cache_tokens;        /* blocks x block_size */
	double concurrency;            /* kv_cache_tokens / ctx, as vLLM prints it */
	double max_concurrent_seqs;    /* whole sequences of ctx tokens, capped at max_num_seqs */
	double per_seq_tokens_per_s;   /* decode at that batch, per sequence (e's profile) */
	double aggregate_tokens_per_s; /* all of them */
	bool fits;                     /* at least one sequence of ctx tokens */
};
/* Serving capacity of j (ctx tokens per sequence) on j->gpus of g under e (vllm's profile when
 * NULL). */
void engine_serving(const struct engine_profile *e, const struct fit_shape *s,
                    const struct fit_job *j, const struct gpu_spec *g, const struct engine_opts *o,
                    struct engine_serving *out);

#endif
