/*
 * The formulas of `gpuscope fit`: how much GPU memory a transformer needs to
 * run (inference) or train (full, freeze, LoRA, QLoRA), broken down line by
 * line and per GPU under tensor parallelism, ZeRO or FSDP, and how fast it
 * can go (decoding bound by memory bandwidth, prefill and training by
 * FLOPs). Pure arithmetic on a struct fit_shape: the model's facts the
 * formulas need, filled from a struct model_cfg by fit_shape_from_model()
 * or by hand. Sources and assumptions are in docs/fit.md; each formula is
 * checked against its published anchors in tests/unit/t_fit.c.
 *
 * Sizes are bytes, rates per second, FLOPS in TFLOPS (1e12).
 */
#ifndef GPUSCOPE_FIT_H
#define GPUSCOPE_FIT_H

#include <stdbool.h>
#include <stddef.h>

struct err;
struct model_cfg;
struct gpu_spec;

enum fit_task { FIT_INFER, FIT_FULL, FIT_FREEZE, FIT_LORA, FIT_QLORA };
enum fit_prec { FIT_FP32, FIT_BF16, FIT_FP16, FIT_FP8, FIT_INT8, FIT_INT4 };
enum fit_optim { FIT_ADAMW, FIT_ADAMW_8BIT, FIT_SGD };
enum fit_shard { FIT_SHARD_NONE, FIT_ZERO1, FIT_ZERO2, FIT_ZERO3, FIT_FSDP };
enum fit_recompute { FIT_RECOMPUTE_NONE, FIT_RECOMPUTE_SELECTIVE, FIT_RECOMPUTE_FULL };

/* The assumptions, stated where they are printed (docs/fit.md says why). */
#define FIT_BW_EFFICIENCY   0.70              /* decode: share of peak memory bandwidth reached */
#define FIT_MFU             0.40              /* prefill and training: model FLOPs utilisation */
#define FIT_CUDA_CONTEXT    (512.0 * 1048576) /* per GPU: CUDA context, cuBLAS workspaces */
#define FIT_FRAMEWORK_INFER 0.05 /* share added for the framework's allocator, inference */
#define FIT_FRAMEWORK_TRAIN 0.10 /* the same, training (fragmentation, NCCL buffers) */
#define FIT_FREEZE_LAYERS   2    /* --task freeze trains the last 2 layers (LLaMA-Factory) */
#define FIT_PREFILL_CHUNK   8192 /* inference activations: prefill in chunks of this many tokens */
#define FIT_LOGIT_BYTES     6    /* per logit in training: bf16 logits and their fp32 copy */

struct fit_job {
	enum fit_task task;
	enum fit_prec prec;
	enum fit_optim optim;
	enum fit_shard shard;
	double ctx;   /* tokens per sequence */
	double batch; /* sequences: per GPU when training (micro-batch), in all when inferring */
	double gpus;  /* inference: tensor parallel over them; training: data parallel */
	double lora_rank; /* lora and qlora */
	double tokens;    /* a run of this many tokens (time and energy); 0 none */
	bool checkpointing;
};

/* The facts of a model the formulas use. */
struct fit_shape {
	double params; /* all of them */
	double active; /* per token (MoE: shared + top-k experts); = params when dense */
	double layers, hidden, heads, vocab;
	double mlp_width;     /* MLP width a token goes through in a layer (MoE: top-k x expert) */
	double kv_per_token;  /* KV-cache bytes per token at 1 byte per value, all layers full */
	double window;        /* sliding-window tokens, 0 none */
	double window_share;  /* share of the layers that are windowed (Gemma 2: 0.5) */
	double block_params;  /* one decoder layer */
	double embed_params;  /* vocab x hidden */
	double lora_per_rank; /* LoRA adapter parameters per unit of rank, every linear layer */
	double max_ctx;       /* 0 unknown */
};

/* Memory per GPU, bytes, by what holds it. */
struct fit_mem {
	double weights, quant, gradients, optimizer, adapters, gathered, activations, kv_cache;
	double cuda, framework, total;
	double trainable; /* parameters trained */
};

struct fit_speed {
	double bw_gbs, peak_tflops, tdp_w; /* of one GPU, from the spec table */
	double bytes_per_step;             /* decode: weights and KV cache read per step */
	double decode_bound;               /* tokens/s per sequence at 100 % of bandwidth */
	double decode, decode_total;       /* per sequence, and all sequences of the batch */
	double prefill;                    /* tokens/s, all GPUs */
	double flops_per_token;            /* training: 6N (8N checkpointed), 4N adapters */
	double train;                      /* tokens/s, all GPUs */
	double time_s, energy_kwh;         /* for job->tokens; NAN none */
};

/* --task, --precision, --optimizer names; -1 when s names none. */
int fit_task_parse(const char *s);
int fit_prec_parse(const char *s);
int fit_optim_parse(const char *s);
const char *fit_task_name(enum fit_task t);
const char *fit_prec_name(enum fit_prec p);
const char *fit_optim_name(enum fit_optim o);
const char *fit_shard_name(enum fit_shard s); /* "none", "zero1", ..., "fsdp" */

/* The defaults: inference, bf16, AdamW, ctx 4096, batch 1, 1 GPU, rank 8. */
void fit_job_init(struct fit_job *j);
/* Whether j can be done at all; E_USAGE with a one-line reason. */
int fit_job_check(const struct fit_job *j, struct err *err);

/* Bytes of a weight at p (int4: 0.5, without its quantisation constants). */
double fit_weight_bytes(enum fit_prec p);
/* Bits per weight of quantisation constants (scales) at p; qlora: NF4 with double quantisation. */
double fit_quant_bits(enum fit_prec p, enum fit_task t);
/* KV-cache bytes per value at p (the cache stays 16-bit under int8/int4 weights). */
double fit_kv_value_bytes(enum fit_prec p);
/* Bytes per trained parameter of weights, gradients and optimizer states (mixed precision). */
void fit_state_bytes(enum fit_prec p, enum fit_optim o, double *w, double *g, double *k);

/*
 * Model states per GPU (ZeRO paper): stage 0 (w+g+k)P; 1 (w+g)P + kP/n;
 * 2 wP + (g+k)P/n; 3 (w+g+k)P/n.
 */
double fit_zero_bytes(double params, double n, int stage, double w, double g, double k);

/* KV cache: 2 L kv_heads head_dim bytes per token; MLA caches L (kv_lora_rank + rope_dim). */
double fit_kv_gqa_per_token(double layers, double kv_heads, double head_dim, double bytes);
double fit_kv_mla_per_token(double layers, double kv_lora_rank, double rope_dim, double bytes);
/* KV-cache bytes of batch sequences of ctx tokens, windowed layers capped at their window. */
double fit_kv_bytes(const struct fit_shape *s, double ctx, double batch, double bytes);

/*
 * Activation bytes of one transformer layer (Korthikanti et al. 2022,
 * Table 2; fp16): s sequence, b micro-batch, h hidden, a heads, t tensor
 * parallel, sp sequence parallel.
 */
double fit_act_megatron(double s, double b, double h, double a, double t, bool sp,
                        enum fit_recompute r);
/*
 * Activation bytes of one layer of a Llama-style model (gated MLP,
 * FlashAttention: no a s^2 term): s b (18 h + 8 mlp_width), Megatron's
 * code's 18 + 4 ffn/h with four ffn-wide tensors for the gated MLP.
 */
double fit_act_layer(double s, double b, double h, double mlp_width);
/* Training activations of the job, whole model (one micro-batch). */
double fit_train_activations(const struct fit_shape *s, const struct fit_job *j);
/* Inference working set: one layer over a prefill chunk, and the last token's logits. */
double fit_infer_activations(const struct fit_shape *s, const struct fit_job *j);

/* LoRA parameters per unit of rank of m, adapters on every linear layer of attention and MLP. */
double fit_lora_per_rank(const struct model_cfg *m);
/* The shape of m (model_params() etc., falling back to the published counts). */
void fit_shape_from_model(const struct model_cfg *m, struct fit_shape *s);

/* Memory per GPU of job j on model s. */
void fit_memory(const struct fit_shape *s, const struct fit_job *j, struct fit_mem *out);
/* The largest batch (up to 65536) and context (up to limit) that fit in cap bytes; 0 none. */
double fit_max_batch(const struct fit_shape *s, const struct fit_job *j, double cap);
double fit_max_ctx(const struct fit_shape *s, const struct fit_job *j, double cap, double limit);

/* Peak dense TFLOPS of g for j's compute precision; NAN unknown. */
double fit_peak_tflops(const struct gpu_spec *g, const struct fit_job *j);
/* Usable bytes of one g (mem_bytes, else mem_gb). */
double fit_spec_bytes(const struct gpu_spec *g);
/* Speeds of j on j->gpus of g. */
void fit_speed(const struct fit_shape *s, const struct fit_job *j, const struct gpu_spec *g,
               struct fit_speed *out);

/*
 * A JSON writer for fit's and specs' documents: indented, one key per line
 * (so that tests/cli/docs.sh finds every key), commas handled.
 */
struct strbuf;
struct fit_jw {
	struct strbuf *sb;
	int depth;
	bool first;
};
void fit_jw_begin(struct fit_jw *jw, struct strbuf *sb);            /* "{" */
void fit_jw_end(struct fit_jw *jw);                                 /* "}\n" */
void fit_jw_open(struct fit_jw *jw, const char *key, char bracket); /* key NULL in an array */
void fit_jw_close(struct fit_jw *jw, char bracket);
void fit_jw_str(struct fit_jw *jw, const char *key, const char *v);          /* v NULL: null */
void fit_jw_num(struct fit_jw *jw, const char *key, double v, int decimals); /* NAN: null */
void fit_jw_bool(struct fit_jw *jw, const char *key, bool v);
void fit_jw_null(struct fit_jw *jw, const char *key);

#endif
