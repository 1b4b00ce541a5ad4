/*
 * Transformer model shapes for `gpuscope fit`: a bundled catalog
 * (data/models/models.tsv, built into the binary, from the models'
 * config.json values), a Hugging Face config.json, or a bare size ("7b").
 * Parameter counts and KV-cache sizes are computed from the shape.
 */
#ifndef GPUSCOPE_MODELS_H
#define GPUSCOPE_MODELS_H

#include <stdbool.h>
#include <stddef.h>

struct err;

struct model_cfg {
	char name[96];
	char family[32]; /* model_type: "llama", "qwen2", "qwen3", "qwen3_moe", "mistral",
	                    "mixtral", "deepseek_v3", "gemma2", "gemma3", "phi3"; "generic" for a
	                    bare size */
	double layers, hidden, heads, kv_heads, head_dim, intermediate, vocab;
	double max_ctx; /* max_position_embeddings (or the model card's context) */
	bool tied_embeddings;
	bool qkv_bias; /* Qwen2 */
	bool qk_norm;  /* an RMSNorm of head_dim on q and on k per layer (Qwen3, Gemma 3) */
	/* mixture of experts; experts 0 = dense */
	double experts, experts_per_token, moe_intermediate, shared_experts, first_dense_layers;
	/* multi-head latent attention (DeepSeek); kv_lora_rank 0 = none */
	double q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim;
	/* sliding-window attention: window tokens (0 none) and on which layers */
	double sliding_window;
	double sliding_every;    /* every Nth layer is global (Gemma 2: 2), 0 = all windowed */
	double params_published; /* total, from the model card; NAN unknown */
	double active_published; /* MoE: active per token; NAN unknown */
	double vision_params; /* a vision encoder that loads with the decoder (Gemma 3), 0 none */
	const char *aliases;  /* catalog rows: other names, comma-separated; "" none */
	const char *source;   /* catalog rows: where the values come from */
};

/* Every catalog row (name and family filled), in catalog order. */
size_t model_catalog(const struct model_cfg **out);

/*
 * Parses a catalog in the format of data/models/models.tsv (text of len
 * bytes, named file in messages) into *rows (xmalloc'd, *nr of them; free
 * with model_table_free). Returns 0, or E_PARSE with err one line naming the
 * file, the line and what is wrong: no header, a header without a required
 * column or with one twice, a row whose cell count differs from the
 * header's, a cell that is not a number (or "?"), not yes/no, or an empty or
 * over-long name.
 */
int model_table_parse(const char *text, size_t len, const char *file, struct model_cfg **rows,
                      size_t *nr, struct err *err);
void model_table_free(struct model_cfg *rows, size_t nr);

/*
 * The catalog model name names, as users type it: case-insensitive, '-' '_'
 * '.' ' ' ignored; an organisation prefix ("meta-llama/") left out; tokens
 * that do not change the shape dropped ("-Instruct", "-chat", "-hf", "-it",
 * "-Base", "-bnb-4bit", "-GGUF", "-AWQ", "-GPTQ", "-FP8", "-Int4", a leading
 * "Meta-", a GGUF type such as "-Q4_K_M" and what follows it); a row's
 * aliases match as its name does (out->name is then the alias); else a
 * unique beginning. 0, or E_NOTFOUND with up to three close names in err.
 */
int model_lookup(const char *name, struct model_cfg *out, struct err *err);

/*
 * A Hugging Face config.json at path (a directory: its config.json), at most
 * 1 MiB, parsed strictly by jansson (core/jsonin.h: no NaN, no trailing
 * commas, no duplicate keys). A key absent or null at the top is looked up
 * in "text_config" (multimodal models). Returns 0, E_NOTFOUND (unreadable)
 * or E_PARSE, with err one line naming the file and what is wrong (the line
 * and column of malformed JSON, the field missing or not a count).
 */
int model_from_config(const char *path, struct model_cfg *out, struct err *err);

/* "7b", "70B", "1.5b", "405b", "8x7b": a generic dense (or MoE) shape of that size; -1 when not a
 * size. */
int model_from_size(const char *s, struct model_cfg *out, struct err *err);

/* MODEL as the command line gives it: a catalog name, a path to a config.json, or a size. */
int model_resolve(const char *arg, struct model_cfg *out, struct err *err);

/* Parameters computed from the shape: all of them, and those active per token (MoE). */
double model_params(const struct model_cfg *m);
double model_active_params(const struct model_cfg *m);

/*
 * KV-cache bytes per token of context for the whole model, at bytes_per_value
 * (2 for fp16): 2 (K and V) x layers x kv_heads x head_dim x bytes, or for
 * multi-head latent attention (DeepSeek) layers x (kv_lora_rank +
 * qk_rope_head_dim) x bytes, the compressed latent an MLA-aware engine caches.
 * Sliding-window layers count in full: the figure holds for contexts within
 * the window; past it, use model_kv_bytes().
 */
double model_kv_bytes_per_token(const struct model_cfg *m, double bytes_per_value);

/*
 * KV-cache bytes for one sequence of ctx tokens: global layers hold ctx
 * tokens, sliding-window layers at most sliding_window of them.
 */
double model_kv_bytes(const struct model_cfg *m, double ctx, double bytes_per_value);

#endif
