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
/*
 * The training stack whose defaults and memory habits fit follows (--trainer):
 * hf = Transformers' Trainer with PEFT / TRL (prepare_model_for_kbit_training,
 * unfused cross-entropy), llama-factory, unsloth (fused chunked cross-entropy,
 * offloaded checkpoints), axolotl; torchtune (bf16 weights, gradients and
 * optimizer states, no fp32 upcast, CEWithChunkedOutputLoss, checkpointing
 * on in its recipes' configs).
 */
enum fit_trainer {
	FIT_TRAINER_HF,
	FIT_TRAINER_LLAMA_FACTORY,
	FIT_TRAINER_UNSLOTH,
	FIT_TRAINER_AXOLOTL,
	FIT_TRAINER_TORCHTUNE
};
/* --offload: DeepSpeed ZeRO-Offload / FSDP CPU offload of optimizer states, parameters, both. */
enum fit_offload { FIT_OFFLOAD_NONE, FIT_OFFLOAD_OPTIMIZER, FIT_OFFLOAD_PARAMS, FIT_OFFLOAD_ALL };

/* The assumptions, stated where they are printed (docs/fit.md says why). */
#define FIT_BW_EFFICIENCY 0.70 /* decode: share of peak memory bandwidth reached */
#define FIT_MFU           0.40 /* prefill and training: model FLOPs utilisation */
/* per GPU: the CUDA context PyTorch makes (about 400 MiB, core/specs.h gpu_spec_context_bytes)
 * and cuBLAS / cuBLASLt workspaces */
#define FIT_CUDA_CONTEXT (512.0 * 1048576)
/* the same for inference: of the KV cache, activations and workspace (a growing HF cache) */
#define FIT_FRAMEWORK_INFER 0.05
/*
 * Training (inference above): the share added to what is allocated and freed every step
 * (activations, logits, the dequantisation workspace, gathered layers),
 * where the PyTorch caching allocator's cached, split blocks and NCCL
 * buffers go; and the share added to what is allocated once (weights,
 * gradients, optimizer states, adapters): the allocator rounds each tensor
 * of over 10 MiB up to 2 MiB (c10/cuda/CUDACachingAllocator.cpp
 * kRoundLarge), and unsloth's "fits in 41 GB" for Llama 3.3 70B QLoRA
 * (unsloth.ai/blog/llama3-3, 2024-12) leaves no room for 10 % over 40 GB
 * of weights.
 */
#define FIT_FRAMEWORK_TRAIN  0.10
#define FIT_FRAMEWORK_STATIC 0.02
#define FIT_FREEZE_LAYERS    2    /* --task freeze trains the last 2 layers (LLaMA-Factory) */
#define FIT_PREFILL_CHUNK    8192 /* inference activations: prefill in chunks of this many tokens */
/*
 * llama.cpp (fit_job.ggml): prompts in micro-batches of n_ubatch 512 tokens
 * (common/common.h), intermediates in f32, FlashAttention on (-fa auto): its
 * compute buffer; its allocator plans buffers exactly (ggml-alloc.c): no
 * framework share; token embeddings stay in host memory (src/llama-model.cpp:
 * "very little benefit to offloading the input layer, so always keep it on
 * the CPU"; a tied matrix is duplicated as the output, on the GPU).
 */
#define FIT_GGML_UBATCH 512
/*
 * The logits in training, bytes per token x vocabulary entry alive at the
 * loss's peak (its backward): Transformers' ForCausalLMLoss (loss_utils.py)
 * takes logits.float(), cross_entropy saves log_softmax's fp32 output; in
 * the backward nll_loss' fp32 gradient and log_softmax's fp32 input gradient
 * are alive with it: 4 + 4 + 4 (the 16-bit logits and the fp32 copy are
 * freed when compute_loss returns).
 */
#define FIT_LOGITS_HF_BYTES 12
/*
 * unsloth never holds the whole logits: its fused linear cross-entropy
 * (unsloth-zoo, Apple's Cut Cross-Entropy since 2024-11) works on chunks of
 * tokens. Bytes per token x hidden: Liger's FusedLinearCrossEntropy rule (a
 * chunk of ceil(BT / ceil(V / H)) tokens, rounded up to a power of two, of
 * 16-bit logits: up to 4 bytes per token x hidden, and the loss's 16-bit
 * input gradient, 2, computed in the forward); CCE holds less (left out).
 */
#define FIT_LOGITS_FUSED_PER_HIDDEN 6
/*
 * torchtune's CEWithChunkedOutputLoss (torchtune/modules/loss/ce_chunked_output_loss.py,
 * 8 chunks): the 16-bit logits of every chunk (2), each chunk's fp32
 * log_softmax saved for the backward (4), one chunk's fp32 copy at a time
 * (4 / 8): the forward's end is the peak. torch.compile (off in the
 * recipes' configs) fuses it further (left out).
 */
#define FIT_LOGITS_CHUNKED_BYTES (2 + 4 + 4.0 / 8)
/*
 * Under torch.compile (--compile) the loss is one fused graph: Inductor's
 * partitioner saves its 16-bit input and the per-token log-sum-exp rather
 * than the fp32 log_softmax (recomputing exp(x - lse) in the backward is
 * cheaper than storing it), and the fp32 upcast never exists apart. Alive at
 * the peak, the loss's backward: the 16-bit logits (2) and the gradient being
 * made, fp32 then cast to 16 bits (4 + 2), over the whole vocabulary at once
 * for Transformers' loss, a chunk of 1/8 at a time for torchtune's
 * (torchtune recipes compile the loss apart: training.compile_loss).
 * Left out: what compiling the decoder layers saves of their activations.
 */
#define FIT_LOGITS_COMPILED_BYTES         (2 + 4 + 2)
#define FIT_LOGITS_COMPILED_CHUNKED_BYTES (2 + (4 + 2) / 8.0)
/* unsloth's "unsloth" checkpointing: layer inputs on the GPU at once (the rest in host memory) */
#define FIT_OFFLOADED_CKPT_LAYERS 2
/* DeepSpeed's estimators: host memory x 1.5 (their additional_buffer_factor) */
#define FIT_DS_BUFFER_FACTOR 1.5

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
	/* checkpointing was given (--checkpointing / --no-checkpointing); else the trainer's */
	bool checkpointing_set;
	enum fit_trainer trainer; /* default FIT_TRAINER_HF */
	/* --pure-bf16: 16-bit weights, gradients and optimizer states, no fp32 master */
	bool compile; /* --compile: torch.compile over the model and its loss (torchtune's compile:
	                 True) */
	bool pure16;
	enum fit_offload offload;
	/* index into fit_quants() (fit/quant.h) of --precision's format; -1 a plain precision */
	int quant;
	double group_size; /* awq / gptq group size (default 128) */
	int kv_cache;      /* index into fit_kv_types() (fit/quant.h); -1 the default (16-bit) */
	/* run by llama.cpp (--engine llama.cpp / ollama; GGUF formats imply it) */
	bool ggml;
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
	/*
	 * What quantisation formats treat differently (fit_job_weight_bytes()); all 0 in
	 * a shape filled by hand, when the linear layers are taken as what is left of
	 * params after the embeddings and LM head.
	 */
	bool tied;             /* the LM head is the token embedding matrix */
	double norm_params;    /* every norm's weights (RMSNorm / LayerNorm) */
	double linear_params;  /* every nn.Linear weight of the decoder layers, all experts */
	double v_params;       /* of those, attention V (or MLA kv_b) projections */
	double down_params;    /* of those, MLP down projections (all experts) */
	double o_params;       /* of those, attention output projections */
	double largest_linear; /* weights of the largest single linear layer (an expert's one) */
	double gqa;            /* query heads per KV head */
	double experts;        /* MoE experts per layer, 0 dense */
};

/* Memory per GPU, bytes, by what holds it. */
struct fit_mem {
	double weights, quant, gradients, optimizer, adapters, gathered, activations, kv_cache;
	/* training: the logits, their fp32 copies and gradients (not in activations) */
	double logits;
	/* quantised weights: embeddings, LM head and norms left in 16 (or 32) bits */
	double unquantised;
	double dequant; /* quantised weights: the dequantisation workspace */
	double cuda, framework, total;
	double trainable; /* parameters trained */
	double host; /* bytes held in host memory (--offload, offloaded checkpoints, llama.cpp) */
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

/*
 * Bytes of all of s's weights as job j stores them (quantised layers with
 * their scales, the parts left in 16 bits, whatever the format keeps), and
 * bytes of those one decode step reads per token (the active ones: MoE
 * top-k); what fit_memory() and the engines' speed (fit/engine.h) agree on.
 */
double fit_job_weight_bytes(const struct fit_shape *s, const struct fit_job *j);
double fit_job_active_weight_bytes(const struct fit_shape *s, const struct fit_job *j);
/*
 * KV-cache bytes per value for j: --kv-cache's type, else the activations'
 * 16 bits (fp32 models: 4), fp8 and quantised weights included: engines
 * quantise the cache only when asked (vLLM --kv-cache-dtype, llama.cpp -ctk).
 */
double fit_job_kv_value_bytes(const struct fit_job *j);
/* Whether j checkpoints activations: as given, else its trainer's default for its task. */
bool fit_job_checkpointing(const struct fit_job *j);
/* Whether j is run by llama.cpp: j->ggml, or inference of a GGUF format. */
bool fit_job_ggml(const struct fit_job *j);

/* Bytes of a weight at p (int4: 0.5, without its quantisation constants). */
double fit_weight_bytes(enum fit_prec p);
/* Bits per weight of quantisation constants (scales) at p; qlora: NF4 with double quantisation. */
double fit_quant_bits(enum fit_prec p, enum fit_task t);
/* KV-cache bytes per value at p (the cache stays 16-bit under int8/int4 weights). */
double fit_kv_value_bytes(enum fit_prec p);
/* Bytes per trained parameter of weights, gradients and optimizer states (mixed precision). */
void fit_state_bytes(enum fit_prec p, enum fit_optim o, double *w, double *g, double *k);
/* The same for job j: --pure-bf16 (pure_bf16) and torchtune keep all three in 16 bits. */
void fit_job_state_bytes(const struct fit_job *j, double *w, double *g, double *k);
/*
 * The weight format j's weights are held in (fit/quant.h), or NULL for a
 * plain precision: --precision's format, else QLoRA's bitsandbytes NF4 or
 * LLM.int8 for int4 / int8.
 */
const struct fit_quant *fit_job_quant(const struct fit_job *j);
/* Whether j's trainer casts what stays 16-bit to fp32 (prepare_model_for_kbit_training). */
bool fit_job_upcasts(const struct fit_job *j);

/*
 * DeepSpeed's estimators of model-state memory (deepspeed/runtime/zero/
 * stage_1_and_2.py estimate_zero2_model_states_mem_needs, stage3.py
 * estimate_zero3_model_states_mem_needs; docs memory.rst), per GPU and per
 * node's host, for params on gpus_per_node GPUs of nodes nodes, zero_init 1.
 */
void fit_ds_zero2_bytes(double params, double gpus_per_node, double nodes, bool offload_optimizer,
                        double *gpu, double *cpu);
void fit_ds_zero3_bytes(double params, double largest_layer, double gpus_per_node, double nodes,
                        bool offload_params, bool offload_optimizer, bool zero_init, double *gpu,
                        double *cpu);
/* Training: the logits' bytes at the loss's peak (fit_mem.logits). */
double fit_train_logits(const struct fit_shape *s, const struct fit_job *j);

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
/*
 * Bytes of one g a job's fit_mem.total is judged against: what CUDA calls
 * its total (gpu_spec_cuda_total_bytes(): NVML's total less the driver's
 * reserve); the CUDA context is in the need (fit_mem.cuda), not taken off
 * here. Else mem_gib GiB.
 */
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
