/*
 * gpuscope fit MODEL: how much GPU memory a model needs to run or train,
 * line by line and per GPU, whether it fits on this machine's GPUs, on named
 * ones or on which to rent, and how fast it would go. The arithmetic is in
 * fit/fit.c; this prints it as a table or JSON (schema gpuscope.fit/1).
 * Exit status 0 fits (or nothing to judge), 1 does not fit, 2 usage.
 */
#include "cmd/cmd.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "backend/collect.h"
#include "core/benchstore.h"
#include "core/config.h"
#include "core/err.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "core/fileio.h"
#include "fit/engine.h"
#include "fit/fit.h"
#include "fit/measured.h"
#include "fit/models.h"
#include "fit/price.h"
#include "fit/quant.h"
#include "core/specs.h"

#define GIB         1073741824.0
#define FIT_SCHEMA  "gpuscope.fit/1"
#define RENT_SHOWN  6
#define MAX_TARGETS 64

static void
fit_usage(FILE *f)
{
	fputs("usage: gpuscope fit MODEL [--task infer|full|freeze|lora|qlora] [--precision P]\n"
	      "         [--ctx N] [--batch N] [--gpus N] [--gpu NAME[,NAME...] | --rent [--prices FILE]]\n"
	      "         [--zero 1|2|3 | --fsdp] [--checkpointing | --no-checkpointing]\n"
	      "         [--trainer hf|llama-factory|unsloth|axolotl|torchtune] [--pure-bf16]\n"
	      "         [--offload optimizer|params|all] [--optimizer adamw|adamw-8bit|sgd]\n"
	      "         [--lora-rank R] [--kv-cache T] [--engine E] [--gpu-memory-utilization F]\n"
	      "         [--block-size N] [--max-num-batched-tokens N] [--max-num-seqs N]\n"
	      "         [--group-size N] [--tokens T] [--json]\n"
	      "How much GPU memory MODEL needs (weights, the parts quantisation leaves in 16 bits,\n"
	      "gradients, optimizer states, activations, logits, KV cache, adapters, CUDA context\n"
	      "and framework), per GPU; whether it fits on this machine's GPUs (free memory now),\n"
	      "on named GPUs or which to rent and at what price; how fast it goes under each\n"
	      "serving engine; and how many sequences vLLM's KV cache holds. MODEL: a catalog\n"
	      "name ('gpuscope fit --list'), a Hugging Face config.json, or a size such as 7b.\n"
	      "      --task=TASK     infer (default), full (full fine-tuning or pre-training), freeze\n"
	      "                      (the last 2 layers), lora, qlora (LoRA on 4- or 8-bit weights)\n"
	      "      --precision=P   weights: fp32, bf16 (default; qlora: nf4), fp16, fp8, int8,\n"
	      "                      int4, or a format: GGUF q2_k q3_k_m q4_0 q4_k_s q4_k_m q5_0\n"
	      "                      q5_k_s q5_k_m q6_k q8_0, awq, gptq, nf4, nvfp4, mxfp4\n"
	      "      --quant=P       the same as --precision\n"
	      "      --group-size=N  awq and gptq: weights per scale (default 128)\n"
	      "      --ctx=N         tokens per sequence (default 4096; \"32k\" = 32768)\n"
	      "      --batch=N       sequences: in all for inference, per GPU for training (default 1)\n"
	      "      --gpus=N        GPUs: tensor parallel for inference, data parallel for training\n"
	      "      --gpu=NAME,...  judge against these GPUs of the spec table ('gpuscope specs')\n"
	      "                      instead of this machine's\n"
	      "      --rent          the GPUs of the spec table that fit, 1 or several, cheapest\n"
	      "                      per hour first, with the price per million tokens\n"
	      "      --prices=FILE   --rent with the prices of FILE (data/prices/README.md format)\n"
	      "      --zero=STAGE    DeepSpeed ZeRO stage 1, 2 or 3 over --gpus\n"
	      "      --fsdp          PyTorch FSDP (full sharding) over --gpus\n"
	      "      --checkpointing, --no-checkpointing\n"
	      "                      activation checkpointing on or off (default: the trainer's:\n"
	      "                      on for lora and qlora; for full and freeze off with hf and\n"
	      "                      axolotl, on with llama-factory and unsloth)\n"
	      "      --trainer=T     hf (default: Transformers Trainer, PEFT, TRL), llama-factory,\n"
	      "                      unsloth, axolotl, torchtune: their defaults and cross-entropy\n"
	      "      --pure-bf16     16-bit weights, gradients and optimizer states, no fp32 master\n"
	      "      --compile       torch.compile over the model and its loss (torchtune's\n"
	      "                      compile: True): the loss keeps 16-bit logits, not fp32\n"
	      "      --offload=WHAT  DeepSpeed ZeRO-Offload / FSDP CPU offload of the optimizer\n"
	      "                      states, the parameters or all (params, all: with --zero 3\n"
	      "                      or --fsdp); host memory checked\n"
	      "      --optimizer=O   adamw (default), adamw-8bit, sgd (with momentum)\n"
	      "      --lora-rank=R   LoRA rank (default 8), adapters on every linear layer\n"
	      "      --kv-cache=T    inference: KV-cache type fp16, bf16, fp8, q8_0, q4_0 (default:\n"
	      "                      16 bits)\n"
	      "      --engine=E      inference: vllm, sglang, trt-llm, llama.cpp (ollama),\n"
	      "                      transformers, gpt-fast, exllamav2 (default: the range of the\n"
	      "                      common ones); vllm, sglang and trt-llm judge the fit by the\n"
	      "                      KV pool they allocate\n"
	      "      --gpu-memory-utilization=F\n"
	      "                      serving: vLLM's share of GPU memory (default 0.9)\n"
	      "      --block-size=N  serving: vLLM's KV block in tokens (default 16)\n"
	      "      --max-num-batched-tokens=N, --max-num-seqs=N\n"
	      "                      serving: vLLM's profile-run tokens and batch cap (default:\n"
	      "                      vLLM's for the GPU)\n"
	      "      --tokens=T      time, energy and price of a run of T tokens (\"2e9\", \"10B\")\n"
	      "  -j, --json          one JSON document (schema gpuscope.fit/1, docs/json-schema.md)\n"
	      "      --list          the model catalog\n"
	      "exit status: 0 fits (or nothing to judge), 1 does not fit on the GPUs asked about\n"
	      "(or --offload needs more host memory than this machine has), 2 usage error\n",
	      f);
}

/* The finite number that s starts with into *v, *end after it; -1 when there is none. */
static int
leading_number(const char *s, double *v, char **end)
{
	if (!s || !*s)
		return -1;
	errno = 0;
	*v = strtod(s, end);
	if (*end == s || errno || !isfinite(*v))
		return -1;
	return 0;
}

/* A whole count, with k/m (x1024 for --ctx, x1000 otherwise). */
static int
parse_count(const char *s, double unit, double *out)
{
	char *end;
	double v;

	if (leading_number(s, &v, &end) < 0)
		return -1;
	if (*end == 'k' || *end == 'K')
		v *= unit, end++;
	else if (*end == 'm' || *end == 'M')
		v *= unit * unit, end++;
	if (*end)
		return -1;
	*out = v;
	return 0;
}

/* --tokens: "2e9", "500M", "10B", "1.5T". */
static int
parse_tokens(const char *s, double *out)
{
	static const char suf[] = "kKmMbBtT";
	static const double scale[] = { 1e3, 1e3, 1e6, 1e6, 1e9, 1e9, 1e12, 1e12 };
	char *end;
	double v;

	if (leading_number(s, &v, &end) < 0)
		return -1;
	if (*end && strchr(suf, *end) && !end[1]) {
		v *= scale[strchr(suf, *end) - suf];
		end++;
	}
	if (*end)
		return -1;
	*out = v;
	return 0;
}

/* --fraction: a number in (0, 1]. */
static int
parse_fraction(const char *s, double *out)
{
	char *end;
	double v;

	if (leading_number(s, &v, &end) < 0 || *end || !(v > 0) || v > 1)
		return -1;
	*out = v;
	return 0;
}

static const char *const trainer_names[] = { "hf", "llama-factory", "unsloth", "axolotl",
	                                     "torchtune" };
static const char *const offload_names[] = { "none", "optimizer", "params", "all" };

static int
name_index(const char *const *names, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcasecmp(names[i], s))
			return (int)i;
	return -1;
}

/* What a verdict is about: a GPU of this machine, or GPUs of the spec table. */
struct target {
	char label[128];
	const struct gpu_spec *spec; /* NULL when the table does not know it */
	bool local;
	char uuid[96];      /* local: the GPU's, for its figures measured by gpuscope bench */
	double total, free; /* bytes of one GPU (NVML's total); free NAN for the spec table */
	double usable;  /* what the job may take: free now (local), else what CUDA can allocate */
	double count;   /* GPUs of this kind the job uses */
	bool fits;      /* in free memory (local) or in what a program can allocate (spec) */
	bool fits_idle; /* local: would fit were the GPU free */
	double margin, max_batch, max_ctx;
	bool served; /* fits, max_batch and max_ctx are --engine's KV pool's */
};

/* A row of --rent: k GPUs of g, and what they cost. */
struct rent_row {
	const struct gpu_spec *g;
	double k;
	const struct price_offer *offer; /* NULL: no price known */
	double per_hour, per_mtok, per_run, tokens_per_s;
};

/* This machine's RAM for --offload (MemTotal, MemAvailable of /proc/meminfo). */
struct host_ram {
	bool read;
	double total, avail; /* bytes */
	bool fits;           /* the host memory the job needs is within MemTotal */
};

struct fit_ctx {
	struct model_cfg m;
	struct fit_shape s;
	struct fit_job j;
	struct fit_mem mem;
	struct target *t;
	size_t nr_t;
	bool local_asked, local_read, rent;
	size_t local_fitting;
	const struct gpu_spec *speed_spec;
	struct fit_speed sp;
	struct gpu_spec measured_spec; /* speed_spec with bench's figures (fit/measured.h) */
	struct fit_measured meas;
	/* engines: the one asked (NULL: the range), the one serving capacity is as (vLLM) */
	const char *engine;
	const struct engine_profile *eng, *serve_eng;
	struct engine_opts eo;
	struct engine_speed es; /* engine, else serve_eng: TP and MoE lines */
	struct engine_range er;
	struct engine_serving sv;
	bool have_es, have_er, have_sv;
	/* --rent */
	const char *prices_file;
	struct price_table pt;
	bool have_prices;
	time_t now;
	struct rent_row rent1[RENT_SHOWN], rentn[RENT_SHOWN];
	size_t nr_rent1, nr_rentn;
	struct host_ram ram;
};

/*
 * Engines that allocate a KV-cache pool up front from a share of the GPU:
 * vLLM (gpu_memory_utilization, default 0.9), SGLang (mem_fraction_static),
 * TensorRT-LLM (kv_cache_free_gpu_mem_fraction, default 0.9). The others
 * (llama.cpp, transformers, gpt-fast, exllamav2) allocate what the job needs.
 */
static bool
preallocates(const char *engine)
{
	return engine &&
	       (!strcmp(engine, "vllm") || !strcmp(engine, "sglang") || !strcmp(engine, "trt-llm"));
}

/* What a program may take of one spec row: the CUDA context is in the need or taken off here. */
static double
spec_cap(const struct fit_ctx *c, const struct gpu_spec *g)
{
	double v = c->mem.cuda > 0 ? gpu_spec_cuda_total_bytes(g) : gpu_spec_usable_bytes(g);

	return isfinite(v) && v > 0 ? v : fit_spec_bytes(g);
}

static void
judge(struct fit_ctx *c, struct target *t)
{
	double cap = t->usable;
	struct fit_job j = c->j;

	j.gpus = t->count;
	t->margin = cap - c->mem.total;
	t->fits = isfinite(cap) && c->mem.total <= cap;
	t->fits_idle = t->local ? isfinite(t->total) && c->mem.total <= t->total : t->fits;
	t->max_batch = isfinite(cap) ? fit_max_batch(&c->s, &j, cap) : NAN;
	/*
	 * Training is not held to the model's context: unsloth and others report
	 * longer ones (RoPE scaling); the table says when it is past it.
	 */
	t->max_ctx = isfinite(cap)
	                     ? fit_max_ctx(&c->s, &j, cap, j.task == FIT_INFER ? c->s.max_ctx : 0)
	                     : NAN;
	t->served = false;
	if (j.task == FIT_INFER && c->engine && preallocates(c->engine) && t->spec) {
		const struct engine_profile *e = engine_find_gpu(c->engine, t->spec);
		struct engine_serving sv;

		if (!e)
			return;
		/*
		 * These servers take their share of the GPU up front and put the KV
		 * cache in what is left of it: whether the job runs, and the longest
		 * context and the largest batch, are the pool's, not free memory's.
		 */
		engine_serving(e, &c->s, &j, t->spec, &c->eo, &sv);
		t->served = true;
		t->fits = sv.fits && (!t->local || t->fits);
		if (!t->local)
			t->fits_idle = t->fits;
		t->max_ctx = fmax(0, sv.kv_cache_tokens);
		if (c->s.max_ctx > 0)
			t->max_ctx = fmin(t->max_ctx, c->s.max_ctx);
		t->max_batch = sv.fits ? fmax(0, sv.max_concurrent_seqs) : 0;
	}
}

/* The GPUs of this machine, quietly (none is an answer, not an error). */
static void
read_local(struct fit_ctx *c, struct gs_config *cfg)
{
	struct err err = ERR_INIT;
	struct collector *col = NULL;
	struct gpu_snapshot snap;

	gpu_snapshot_init(&snap);
	if (collector_open(cfg, &col, &err) == 0 && collector_scan(col, &err) == 0 &&
	    collector_sample(col, &snap, 0, &err) == 0) {
		c->local_read = true;
		for (size_t i = 0; i < snap.nr_dev && c->nr_t < MAX_TARGETS; i++) {
			const struct gpu_device *d = &snap.dev[i];
			struct target *t;
			double usable;
			char idx[24];

			/* CUDA runs on a MIG GPU's MIG devices only: they are the targets */
			if (!d->is_mig && i + 1 < snap.nr_dev && snap.dev[i + 1].is_mig)
				continue;
			t = &c->t[c->nr_t++];
			memset(t, 0, sizeof(*t));
			snprintf(t->label, sizeof(t->label), "%s %s",
			         gpu_device_label(&snap, d, idx, sizeof(idx)),
			         d->name[0] ? d->name : "GPU");
			t->local = true;
			/* a MIG device has a share of its GPU, not the sheet's figures */
			t->spec = d->is_mig ? NULL : gpu_spec_match(d);
			snprintf(t->uuid, sizeof(t->uuid), "%s", d->uuid);
			t->total = dev_get(d, GF_MEM_TOTAL);
			t->free = dev_get(d, GF_MEM_FREE);
			if (!isfinite(t->free) && isfinite(t->total) && dev_has(d, GF_MEM_USED))
				t->free = t->total - dev_get(d, GF_MEM_USED);
			/*
			 * NVML's free memory is already net of the driver's reserve; what
			 * the job may take of it is less the CUDA context unless the need
			 * counts it, and never more than an idle card would give.
			 */
			usable = gpu_usable_from_total(t->total, t->spec);
			if (c->mem.cuda > 0 && isfinite(usable))
				usable += gpu_spec_context_bytes(t->spec);
			t->usable = c->mem.cuda > 0 ? t->free
			                            : t->free - gpu_spec_context_bytes(t->spec);
			if (isfinite(usable))
				t->usable = fmin(t->usable, usable);
			t->count = c->j.gpus;
			judge(c, t);
			if (isfinite(usable) && c->mem.total > usable)
				t->fits_idle = false;
			if (t->fits)
				c->local_fitting++;
		}
	}
	if (col)
		collector_close(col);
	gpu_snapshot_release(&snap);
}

static const char *
env_get(const char *name)
{
	return getenv(name);
}

/* Speeds on a local GPU that gpuscope bench measured: its figures, not the sheet's. */
static bool
use_measured(struct fit_ctx *c, const struct target *t, const struct gs_config *cfg)
{
	struct bench_store_dirs dirs;
	struct bench_record rec = { 0 };
	bool used = false;

	if (!t->local || !bench_store_uuid_ok(t->uuid))
		return false;
	bench_store_dirs_init(&dirs, env_get, cfg->root);
	if (bench_store_get(&dirs, t->uuid, &rec, NULL) == 0 &&
	    fit_apply_measured(t->spec, &rec, &c->j, &c->measured_spec, &c->meas)) {
		if (!t->spec)
			c->measured_spec.name = c->meas.equiv.name = t->label;
		/* the arithmetic takes the sheet a card measuring this would have (fit/measured.h)
		 */
		c->speed_spec = &c->meas.equiv;
		used = true;
	}
	bench_record_release(&rec);
	return used;
}

static int
add_named(struct fit_ctx *c, const char *list)
{
	char *names = xstrdup(list), *save = NULL;

	for (char *n = strtok_r(names, ",", &save); n; n = strtok_r(NULL, ",", &save)) {
		const struct gpu_spec *close[5];
		size_t nr_close = 0;
		const struct gpu_spec *g = gpu_spec_find(n, close, 5, &nr_close);
		struct target *t;

		if (!g) {
			struct strbuf sb = STRBUF_INIT;

			for (size_t i = 0; i < nr_close; i++)
				strbuf_addf(&sb, "%s'%s'", i ? ", " : " (did you mean ",
				            close[i]->name);
			if (nr_close)
				strbuf_addstr(&sb, "?)");
			cmd_error(
			        "--gpu: '%s' is not one GPU of the spec table%s; 'gpuscope specs' lists them",
			        n, sb.buf);
			strbuf_release(&sb);
			free(names);
			return EXIT_USAGE;
		}
		if (c->nr_t >= MAX_TARGETS)
			break;
		t = &c->t[c->nr_t++];
		memset(t, 0, sizeof(*t));
		snprintf(t->label, sizeof(t->label), "%s", g->name);
		t->spec = g;
		t->total = isfinite(g->mem_bytes) ? g->mem_bytes : fit_spec_bytes(g);
		t->usable = spec_cap(c, g);
		t->free = NAN;
		t->count = c->j.gpus;
		judge(c, t);
	}
	free(names);
	return EXIT_OK;
}

/* The job on k GPUs of a kind, as --rent asks it: several GPUs shard training. */
static void
job_on(const struct fit_ctx *c, double k, struct fit_job *j)
{
	*j = c->j;
	j->gpus = k;
	if (k > 1 && j->task != FIT_INFER && j->shard == FIT_SHARD_NONE)
		j->shard = FIT_FSDP; /* several GPUs only help training when it shards */
	if (k == 1)
		j->shard = FIT_SHARD_NONE;
}

static bool
fits_on(const struct fit_ctx *c, const struct gpu_spec *g, double k)
{
	struct fit_job j;
	struct fit_mem m;

	job_on(c, k, &j);
	if (j.task == FIT_INFER && preallocates(c->engine)) {
		const struct engine_profile *e = engine_find_gpu(c->engine, g);
		struct engine_serving sv;

		if (e) { /* as judge(): the server's pool decides */
			engine_serving(e, &c->s, &j, g, &c->eo, &sv);
			return sv.fits;
		}
	}
	fit_memory(&c->s, &j, &m);
	return m.total <= spec_cap(c, g);
}

/* The rate a rented row's price is per: serving's aggregate, else decode, or training. */
static double
rent_rate(const struct fit_ctx *c, const struct gpu_spec *g, double k)
{
	struct fit_job j;

	job_on(c, k, &j);
	if (j.task == FIT_INFER) {
		const struct engine_profile *e = engine_find_gpu(c->engine ? c->engine : "vllm", g);
		struct engine_serving sv;
		struct engine_speed es;

		if (!e)
			return NAN;
		engine_serving(e, &c->s, &j, g, &c->eo, &sv);
		if (sv.fits && sv.aggregate_tokens_per_s > 0)
			return sv.aggregate_tokens_per_s;
		engine_speed(e, &c->s, &j, g, &c->eo, &es);
		return es.decode_total;
	} else {
		struct fit_speed sp;

		fit_speed(&c->s, &j, g, &sp);
		return sp.train;
	}
}

static void
price_row(const struct fit_ctx *c, struct rent_row *r)
{
	r->offer = NULL;
	r->per_hour = r->per_mtok = r->per_run = r->tokens_per_s = NAN;
	r->tokens_per_s = rent_rate(c, r->g, r->k);
	if (!c->have_prices)
		return;
	r->offer = price_cheapest(&c->pt, r->g, r->k, price_default_kinds(&c->pt));
	if (!r->offer)
		return;
	r->per_hour = price_per_hour(r->offer, r->k);
	r->per_mtok = price_per_mtok(r->per_hour, r->tokens_per_s);
	if (c->j.tokens > 0)
		r->per_run = price_per_run(r->per_hour, c->j.tokens, r->tokens_per_s);
}

/* Priced rows cheapest per hour first, then the unpriced by memory in all. */
static int
cmp_rent_row(const void *a, const void *b)
{
	const struct rent_row *x = a, *y = b;
	double mx = x->k * fit_spec_bytes(x->g), my = y->k * fit_spec_bytes(y->g);

	if (isfinite(x->per_hour) != isfinite(y->per_hour))
		return isfinite(x->per_hour) ? -1 : 1;
	if (isfinite(x->per_hour) && x->per_hour != y->per_hour)
		return x->per_hour < y->per_hour ? -1 : 1;
	if (mx != my)
		return mx < my ? -1 : 1;
	return (isfinite(y->g->mem_bw_gbs) ? y->g->mem_bw_gbs : 0) >
	                       (isfinite(x->g->mem_bw_gbs) ? x->g->mem_bw_gbs : 0)
	               ? 1
	               : -1;
}

/* --rent: the rows that fit on one GPU, and on 2, 4 or 8, cheapest per hour first. */
static void
rent(struct fit_ctx *c)
{
	const struct gpu_spec *rows;
	size_t n = gpu_specs(&rows), nr1 = 0, nrn = 0;
	struct rent_row *one, *many;

	if (!n)
		return;
	one = xcalloc(n, sizeof(*one));
	many = xcalloc(n, sizeof(*many));
	for (size_t i = 0; i < n; i++) {
		const struct gpu_spec *g = &rows[i];

		if (!(fit_spec_bytes(g) > 0))
			continue;
		if (fits_on(c, g, 1)) {
			one[nr1].g = g;
			one[nr1].k = 1;
			price_row(c, &one[nr1++]);
			continue;
		}
		for (double k = 2; k <= 8; k *= 2) {
			if (fits_on(c, g, k)) {
				many[nrn].g = g;
				many[nrn].k = k;
				price_row(c, &many[nrn++]);
				break;
			}
		}
	}
	qsort(one, nr1, sizeof(*one), cmp_rent_row);
	qsort(many, nrn, sizeof(*many), cmp_rent_row);
	c->nr_rent1 = nr1 < RENT_SHOWN ? nr1 : RENT_SHOWN;
	c->nr_rentn = nrn < RENT_SHOWN ? nrn : RENT_SHOWN;
	memcpy(c->rent1, one, c->nr_rent1 * sizeof(*one));
	memcpy(c->rentn, many, c->nr_rentn * sizeof(*many));
	if (!c->speed_spec && c->nr_rent1)
		c->speed_spec = c->rent1[0].g;
	free(one);
	free(many);
}

/* MemTotal and MemAvailable of proc_root/meminfo, bytes; false when unreadable. */
static bool
read_meminfo(const char *proc_root, double *total, double *avail)
{
	struct strbuf sb = STRBUF_INIT;
	const char *keys[] = { "MemTotal:", "MemAvailable:" };
	double *out[] = { total, avail };
	bool ok = true;

	*total = *avail = NAN;
	if (file_read(proc_root, "meminfo", &sb, 65536, NULL) < 0) {
		strbuf_release(&sb);
		return false;
	}
	for (size_t i = 0; i < 2; i++) {
		const char *at = sb.buf;
		char *end;
		double kb;

		/* the key at the start of a line, then "N kB" */
		while ((at = strstr(at, keys[i])) && at != sb.buf && at[-1] != '\n')
			at++;
		if (!at) {
			ok = i > 0 && ok; /* an old kernel has no MemAvailable */
			continue;
		}
		errno = 0;
		kb = strtod(at + strlen(keys[i]), &end);
		if (errno || end == at + strlen(keys[i]) || !isfinite(kb) || kb < 0) {
			ok = false;
			continue;
		}
		*out[i] = kb * 1024;
	}
	strbuf_release(&sb);
	return ok && isfinite(*total);
}

static void
gib(struct strbuf *sb, double v)
{
	if (isfinite(v))
		strbuf_addf(sb, "%9.2f", v / GIB);
	else
		strbuf_addf(sb, "%9s", "-");
}

static void
mem_line(struct strbuf *sb, const char *what, double v, const char *why)
{
	if (!(v > 0))
		return;
	strbuf_addf(sb, "  %-22s", what);
	gib(sb, v);
	strbuf_addf(sb, "  %s\n", why);
}

static const char *
count_str(double v, char *buf, size_t size)
{
	if (v >= 1e12)
		snprintf(buf, size, "%.3g T", v / 1e12);
	else if (v >= 1e9)
		snprintf(buf, size, "%.3g B", v / 1e9);
	else if (v >= 1e6)
		snprintf(buf, size, "%.3g M", v / 1e6);
	else
		snprintf(buf, size, "%.0f", v);
	return buf;
}

/* "q4_k_m" for a format, else the plain precision's name. */
static const char *
weights_name(const struct fit_job *j)
{
	const struct fit_quant *q = fit_job_quant(j);

	return q ? q->name : fit_prec_name(j->prec);
}

static const char *
kv_name(const struct fit_job *j)
{
	const struct fit_kv_type *kv;
	size_t n = fit_kv_types(&kv);

	if (j->kv_cache >= 0 && (size_t)j->kv_cache < n)
		return kv[j->kv_cache].name;
	return fit_job_kv_value_bytes(j) >= 4 ? "fp32" : "16-bit";
}

static void
text_memory(struct fit_ctx *c, struct strbuf *sb)
{
	const struct fit_mem *m = &c->mem;
	const struct fit_job *j = &c->j;
	const struct fit_quant *q = fit_job_quant(j);
	char a[32], b[32], why[320];
	bool train = j->task != FIT_INFER;
	double w, g, k;

	strbuf_addf(sb, "%s: %s parameters", c->m.name[0] ? c->m.name : "model",
	            count_str(c->s.params, a, sizeof(a)));
	if (c->m.experts > 0 && c->s.active < c->s.params)
		strbuf_addf(sb, " (%s active)", count_str(c->s.active, b, sizeof(b)));
	strbuf_addf(sb, "; %s, %s, ctx %.0f, batch %.0f%s, %.0f GPU%s", fit_task_name(j->task),
	            weights_name(j), j->ctx, j->batch, train ? " per GPU" : "", j->gpus,
	            j->gpus > 1 ? "s" : "");
	if (j->shard != FIT_SHARD_NONE)
		strbuf_addf(sb, ", %s", fit_shard_name(j->shard));
	if (train) {
		strbuf_addf(sb, ", %s, trainer %s", fit_optim_name(j->optim),
		            trainer_names[j->trainer]);
		if (j->pure16)
			strbuf_addstr(sb, ", pure bf16");
		if (j->compile)
			strbuf_addstr(sb, ", torch.compile");
		if (j->offload != FIT_OFFLOAD_NONE)
			strbuf_addf(sb, ", offload %s", offload_names[j->offload]);
		if (j->checkpointing_set)
			strbuf_addf(sb, "\ncheckpointing %s (as asked)",
			            j->checkpointing ? "on" : "off");
		else
			strbuf_addf(sb, "\ncheckpointing %s (the trainer's default for %s; %s)",
			            j->checkpointing ? "on" : "off", fit_task_name(j->task),
			            j->checkpointing ? "--no-checkpointing" : "--checkpointing");
	} else if (j->kv_cache >= 0) {
		strbuf_addf(sb, ", KV cache %s", kv_name(j));
	}
	strbuf_addf(sb, "\n\nmemory per GPU%*s\n", 19, "GiB");
	fit_job_state_bytes(j, &w, &g, &k);
	if (q && q->gguf)
		snprintf(why, sizeof(why),
		         "llama.cpp %s mixture, %.3g bits a weight on average with the scales "
		         "below (attn_v / ffn_down more in some layers, output Q6_K)%s",
		         q->name, 8 * fit_job_weight_bytes(&c->s, j) / c->s.params,
		         !train && j->gpus > 1 ? ", tensor parallel" : "");
	else if (q)
		snprintf(why, sizeof(why), "%s %s in %s: %.3g bits each with the scales below%s",
		         count_str(c->s.linear_params > 0 ? c->s.linear_params : c->s.params, a,
		                   sizeof(a)),
		         q->gguf ? "weights of the 2-D tensors" : "linear-layer weights", q->name,
		         fit_quant_weight_bits(q, j->group_size),
		         j->shard >= FIT_ZERO3   ? ", sharded"
		         : !train && j->gpus > 1 ? ", tensor parallel"
		                                 : "");
	else
		snprintf(why, sizeof(why), "%s params x %g bytes (%s)%s",
		         count_str(c->s.params, a, sizeof(a)),
		         j->task == FIT_FULL || j->task == FIT_FREEZE ? w
		                                                      : fit_weight_bytes(j->prec),
		         j->task == FIT_FULL || j->task == FIT_FREEZE ? (w >= 4 ? "fp32" : "16-bit")
		                                                      : fit_prec_name(j->prec),
		         j->shard >= FIT_ZERO3   ? ", sharded"
		         : !train && j->gpus > 1 ? ", tensor parallel"
		                                 : "");
	if (m->host > 0 && !train && fit_job_ggml(j) && !c->s.tied)
		snprintf(why + strlen(why), sizeof(why) - strlen(why),
		         "; the token embeddings in host memory");
	mem_line(sb, "weights", m->weights, why);
	snprintf(why, sizeof(why), "%.3g bits per weight of scales%s",
	         q ? fit_quant_weight_bits(q, j->group_size) -
	                         (q->group_bits > 0 ? 4 : q->bits - q->scale_bits)
	           : fit_quant_bits(j->prec, j->task),
	         q && q->group_bits > 0 ? " (a 16-bit scale and a 4-bit zero per group)" : "");
	mem_line(sb, "quantisation scales", m->quant, why);
	snprintf(why, sizeof(why), "%s%s (%s), %s",
	         q && q->gguf ? "norms" : "embeddings, LM head and norms",
	         q && !q->gguf && c->s.tied ? " (head tied)" : "",
	         q && q->bnb    ? "bitsandbytes replaces nn.Linear only"
	         : q && q->gguf ? "llama.cpp keeps 1-D tensors in f32"
	                        : "the format quantises linear layers",
	         fit_job_upcasts(j) ? "fp32: prepare_model_for_kbit_training upcasts them"
	                            : "16-bit");
	mem_line(sb, "not quantised", m->unquantised, why);
	mem_line(sb, "dequantisation", m->dequant,
	         "the largest linear layer dequantised to 16 bits, forward and backward");
	mem_line(sb, "gathered layer", m->gathered,
	         "4 x the largest layer, unsharded while in use");
	/* bytes per trained parameter as held before sharding divides them */
	g = m->trainable > 0 ? m->gradients / m->trainable * (j->shard >= FIT_ZERO2 ? j->gpus : 1)
	                     : 0;
	k = m->trainable > 0 ? m->optimizer / m->trainable * (j->shard >= FIT_ZERO1 ? j->gpus : 1)
	                     : 0;
	snprintf(why, sizeof(why), "%s trained params x %.3g bytes%s%s",
	         count_str(m->trainable, a, sizeof(a)), g,
	         j->task == FIT_LORA || j->task == FIT_QLORA
	                 ? (g < 3 ? " (16-bit adapters)" : " (fp32 adapters)")
	                 : "",
	         j->shard >= FIT_ZERO2 ? ", sharded" : "");
	mem_line(sb, "gradients", m->gradients, why);
	snprintf(why, sizeof(why), "%s, %.3g bytes a trained param%s%s", fit_optim_name(j->optim),
	         k, j->pure16 ? " (16-bit states, no fp32 master)" : "",
	         j->shard >= FIT_ZERO1 ? ", sharded" : "");
	mem_line(sb, "optimizer states", m->optimizer, why);
	snprintf(why, sizeof(why), "rank %.0f on every linear layer, %s", j->lora_rank,
	         m->trainable > 0 && m->adapters / m->trainable < 3 ? "16-bit" : "fp32");
	mem_line(sb, "LoRA adapters", m->adapters, why);
	if (train)
		snprintf(
		        why, sizeof(why), "%s",
		        !j->checkpointing ? "every layer, FlashAttention"
		        : j->trainer == FIT_TRAINER_UNSLOTH
		                ? "checkpointed, layer inputs offloaded to host (unsloth)"
		        : fit_job_upcasts(j)
		                ? "checkpointed: layer inputs (fp32: the upcast embeddings make the "
		                  "residual stream fp32), one layer recomputed"
		                : "checkpointed: layer inputs, one layer recomputed");
	else if (fit_job_ggml(j))
		snprintf(why, sizeof(why),
		         "llama.cpp's compute buffer: a %.0f-token ubatch in f32, FlashAttention",
		         fmin(j->ctx, FIT_GGML_UBATCH));
	else
		snprintf(why, sizeof(why), "one layer over a %.0f-token prefill chunk",
		         fmin(j->ctx, FIT_PREFILL_CHUNK));
	mem_line(sb, "activations", m->activations, why);
	if (j->trainer == FIT_TRAINER_UNSLOTH)
		snprintf(why, sizeof(why),
		         "fused linear cross-entropy in chunks: %g bytes a token x hidden (Liger's "
		         "chunk rule; unsloth's Cut Cross-Entropy holds less)",
		         (double)FIT_LOGITS_FUSED_PER_HIDDEN);
	else if (j->compile)
		snprintf(why, sizeof(why),
		         "%.0f tokens x %.0f vocab x %g bytes: torch.compile fuses the loss, which "
		         "keeps the 16-bit logits and makes their gradient %s",
		         j->ctx * j->batch, c->s.vocab,
		         j->trainer == FIT_TRAINER_TORCHTUNE ? FIT_LOGITS_COMPILED_CHUNKED_BYTES
		                                             : (double)FIT_LOGITS_COMPILED_BYTES,
		         j->trainer == FIT_TRAINER_TORCHTUNE ? "a chunk of 1/8 at a time"
		                                             : "over the whole vocabulary");
	else if (j->trainer == FIT_TRAINER_TORCHTUNE)
		snprintf(
		        why, sizeof(why),
		        "%.0f tokens x %.0f vocab x %g bytes: 16-bit logits, fp32 in chunks of 1/8 "
		        "(torchtune CEWithChunkedOutputLoss)",
		        j->ctx * j->batch, c->s.vocab, (double)FIT_LOGITS_CHUNKED_BYTES);
	else
		snprintf(
		        why, sizeof(why),
		        "%.0f tokens x %.0f vocab x %g bytes: fp32 log_softmax kept, its gradient and "
		        "the input's at the backward peak (HF ForCausalLMLoss)%s",
		        j->ctx * j->batch, c->s.vocab, (double)FIT_LOGITS_HF_BYTES,
		        fit_job_upcasts(j) ? "; + the LM head's bf16 copy under autocast (it was "
		                             "upcast to fp32)"
		                           : "");
	mem_line(sb, "logits", m->logits, why);
	snprintf(why, sizeof(why), "%.0f KiB/token (%s) x %.0f tokens x %.0f sequence%s%s",
	         c->s.kv_per_token * fit_job_kv_value_bytes(j) / 1024, kv_name(j), j->ctx, j->batch,
	         j->batch > 1 ? "s" : "", c->s.window > 0 ? " (windowed layers capped)" : "");
	mem_line(sb, "KV cache", m->kv_cache, why);
	mem_line(sb, "CUDA context", m->cuda, "context and library workspaces");
	if (train)
		snprintf(why, sizeof(why),
		         "%.0f %% of activations and logits, %.0f %% of weights and states "
		         "(PyTorch caching allocator)",
		         100 * FIT_FRAMEWORK_TRAIN, 100 * FIT_FRAMEWORK_STATIC);
	else
		snprintf(why, sizeof(why), "%.0f %% for the allocator and buffers",
		         100 * FIT_FRAMEWORK_INFER);
	mem_line(sb, "framework", m->framework, why);
	strbuf_addf(sb, "  %-22s", "total");
	gib(sb, m->total);
	strbuf_addch(sb, '\n');
	if (m->host > 0) {
		bool ckpt_host = j->trainer == FIT_TRAINER_UNSLOTH && fit_job_checkpointing(j);

		strbuf_addf(sb, "  %-22s", "host memory");
		gib(sb, m->host);
		if (j->offload != FIT_OFFLOAD_NONE)
			strbuf_addf(
			        sb,
			        "  offloaded %s (DeepSpeed ZeRO-Offload's estimator, x %.1f for "
			        "pinned buffers)%s\n",
			        j->offload == FIT_OFFLOAD_OPTIMIZER ? "optimizer states"
			        : j->offload == FIT_OFFLOAD_PARAMS
			                ? "parameters"
			                : "parameters and optimizer states",
			        FIT_DS_BUFFER_FACTOR,
			        ckpt_host ? ", and layer inputs (unsloth's checkpointing)" : "");
		else if (ckpt_host)
			strbuf_addstr(
			        sb,
			        "  layer inputs offloaded by unsloth's gradient checkpointing\n");
		else
			strbuf_addstr(sb,
			              "  the token embeddings: llama.cpp keeps the input layer in "
			              "host memory\n");
	}
}

/* --offload: the host memory against this machine's RAM. */
static void
text_host(struct fit_ctx *c, struct strbuf *sb)
{
	const struct host_ram *r = &c->ram;

	if (!(c->mem.host > 0))
		return;
	if (!r->read) {
		strbuf_addf(sb,
		            "host memory: %.2f GiB needed; this machine's RAM could not be read\n",
		            c->mem.host / GIB);
		return;
	}
	strbuf_addf(sb, "host memory: %.2f GiB needed, this machine has %.2f GiB",
	            c->mem.host / GIB, r->total / GIB);
	if (isfinite(r->avail))
		strbuf_addf(sb, " (%.2f available)", r->avail / GIB);
	if (!r->fits)
		strbuf_addstr(sb, ": does not fit in RAM\n");
	else if (isfinite(r->avail) && c->mem.host > r->avail)
		strbuf_addstr(sb, ": fits, but not in what is available now\n");
	else
		strbuf_addstr(sb, ": fits\n");
}

static void
text_targets(struct fit_ctx *c, struct strbuf *sb)
{
	if (!c->nr_t) {
		if (c->local_asked)
			strbuf_addstr(sb,
			              "\nno GPU to judge on this machine: --gpu NAME or --rent\n");
		return;
	}
	strbuf_addf(sb, "\n%-34s %5s %9s %9s %9s %10s  %-14s %9s %9s\n", "fits on", "GPUs", "total",
	            "usable", c->local_read ? "free" : "", "margin", "verdict", "max batch",
	            "max ctx");
	for (size_t i = 0; i < c->nr_t; i++) {
		const struct target *t = &c->t[i];
		const char *v = t->fits ? "fits" : t->fits_idle ? "not now (busy)" : "does not fit";

		strbuf_addf(sb, "%-34.34s %5.0f", t->label, t->count);
		gib(sb, t->total);
		strbuf_addstr(sb, " ");
		gib(sb, t->usable);
		strbuf_addstr(sb, " ");
		if (t->local)
			gib(sb, t->free);
		else
			strbuf_addf(sb, "%9s", "");
		strbuf_addf(sb, " %+10.2f  %-14s %9.0f %9.0f\n", t->margin / GIB, v, t->max_batch,
		            t->max_ctx);
	}
	for (size_t i = 0; i < c->nr_t; i++) {
		const struct target *t = &c->t[i];

		if (t->spec && !t->local && isfinite(t->spec->mem_bytes))
			strbuf_addf(
			        sb,
			        "  %s: %.0f GiB as sold, %.0f MiB total as nvidia-smi shows%s\n",
			        t->spec->name, t->spec->mem_gib, t->spec->mem_bytes / 1048576.0,
			        t->spec->mem_measured ? "" : " (the reserve rule: no capture)");
	}
	if (c->j.task != FIT_INFER && c->s.max_ctx > 0) {
		for (size_t i = 0; i < c->nr_t; i++)
			if (c->t[i].max_ctx > c->s.max_ctx) {
				strbuf_addf(
				        sb,
				        "(max ctx past the model's context of %.0f: what memory "
				        "allows, with RoPE scaling to use it)\n",
				        c->s.max_ctx);
				break;
			}
	}
	if (c->nr_t && c->t[0].served)
		strbuf_addf(
		        sb,
		        "(verdict, max batch and max ctx as %s puts the KV cache in %.2g of the "
		        "GPU: the serving lines below)\n",
		        c->engine, c->eo.gpu_memory_utilization);
	if (c->local_read && c->j.gpus > 1)
		strbuf_addf(sb,
		            "%zu of this machine's GPUs fit the per-GPU need; the job needs %.0f\n",
		            c->local_fitting, c->j.gpus);
	strbuf_addf(sb,
	            "(GiB per GPU; usable: %s; max batch at this context, max ctx at this "
	            "batch)\n",
	            c->local_read ? (c->mem.cuda > 0 ? "free now, the need counts the CUDA context"
	                                             : "free now less the CUDA context")
	            : c->mem.cuda > 0 ? "what CUDA reports as total, the need counts its context"
	                              : "what a CUDA program can allocate");
	/* training without checkpointing that does not fit: say what checkpointing would need */
	if (c->j.task != FIT_INFER && !c->j.checkpointing) {
		bool any_short = false;

		for (size_t i = 0; i < c->nr_t; i++)
			any_short |= !c->t[i].fits;
		if (any_short) {
			struct fit_job j = c->j;
			struct fit_mem m;

			j.checkpointing = j.checkpointing_set = true;
			fit_memory(&c->s, &j, &m);
			strbuf_addf(
			        sb,
			        "with --checkpointing: %.2f GiB per GPU (activations %.2f GiB), "
			        "for about a third more compute\n",
			        m.total / GIB, m.activations / GIB);
		}
	}
}

static void
text_rent_row(const struct fit_ctx *c, struct strbuf *sb, const struct rent_row *r)
{
	struct fit_job j;
	struct fit_mem m;

	job_on(c, r->k, &j);
	fit_memory(&c->s, &j, &m);
	strbuf_addf(sb, "  %.0f x %-26.26s %5.0f GiB %+8.2f", r->k, r->g->name,
	            r->k * r->g->mem_gib, (spec_cap(c, r->g) - m.total) / GIB);
	if (r->offer) {
		strbuf_addf(sb, " %8.2f $/h %-12.12s", r->per_hour, r->offer->provider);
		if (isfinite(r->per_mtok))
			strbuf_addf(sb, " %8.3f $/Mtok", r->per_mtok);
		else
			strbuf_addf(sb, " %13s", "-");
		if (isfinite(r->per_run))
			strbuf_addf(sb, " %10.0f $/run", r->per_run);
	} else if (c->have_prices) {
		strbuf_addstr(sb, "        no price");
	}
	strbuf_addch(sb, '\n');
}

static void
text_rent(struct fit_ctx *c, struct strbuf *sb)
{
	const struct rent_row *best = NULL;

	if (!c->rent)
		return;
	strbuf_addf(sb, "\nto rent, one GPU (%s):\n",
	            c->have_prices ? "cheapest per hour first; spare GiB per GPU"
	                           : "smallest first; spare GiB per GPU");
	if (!c->nr_rent1)
		strbuf_addstr(sb, "  none of the spec table fits alone\n");
	for (size_t i = 0; i < c->nr_rent1; i++)
		text_rent_row(c, sb, &c->rent1[i]);
	strbuf_addf(sb, "several GPUs (%s; %s):\n",
	            c->j.task == FIT_INFER         ? "tensor parallel"
	            : c->j.shard != FIT_SHARD_NONE ? fit_shard_name(c->j.shard)
	                                           : "fsdp",
	            c->have_prices ? "cheapest per hour first" : "smallest memory in all first");
	if (!c->nr_rentn)
		strbuf_addstr(sb, "  none needs 2 to 8 GPUs\n");
	for (size_t i = 0; i < c->nr_rentn; i++)
		text_rent_row(c, sb, &c->rentn[i]);
	if (!c->have_prices)
		return;
	for (size_t i = 0; i < c->nr_rent1 + c->nr_rentn; i++) {
		const struct rent_row *r =
		        i < c->nr_rent1 ? &c->rent1[i] : &c->rentn[i - c->nr_rent1];

		if (isfinite(r->per_mtok) && (!best || r->per_mtok < best->per_mtok))
			best = r;
	}
	if (best)
		strbuf_addf(sb,
		            "cheapest per million tokens: %.0f x %s at %.3f $ (%.0f tokens/s %s)\n",
		            best->k, best->g->name, best->per_mtok, best->tokens_per_s,
		            c->j.task != FIT_INFER ? "training"
		            : c->eng               ? "in all, serving as asked"
		                                   : "in all, serving as vLLM at its concurrency");
	strbuf_addf(sb, "prices: %s, %s offers, %s%s (%s)\n",
	            c->have_prices && c->pt.builtin ? "the built-in table (data/prices/prices.tsv)"
	                                            : c->pt.origin,
	            price_default_kinds(&c->pt) == PRICE_ON_DEMAND ? "on-demand" : "all",
	            c->pt.newest >= 0 ? "newest of " : "",
	            c->pt.newest >= 0 ? price_newest_s(&c->pt) : "no dates",
	            "USD per GPU-hour as the source listed it");
	if (price_is_old(&c->pt, c->now))
		strbuf_addf(sb,
		            "note: the prices are %.0f days old (more than %d): check them, or "
		            "give your own with --prices FILE\n",
		            price_age_days(&c->pt, c->now), PRICE_OLD_DAYS);
}

/* The engines' figures for j on c->speed_spec (inference). */
static void
engine_figures(struct fit_ctx *c)
{
	const struct gpu_spec *g = c->speed_spec;

	if (!g || c->j.task != FIT_INFER)
		return;
	/* the engine asked for, on this GPU's generation; serving capacity is vLLM's without one */
	c->eng = c->engine ? engine_find_gpu(c->engine, g) : NULL;
	c->serve_eng = c->eng ? c->eng : engine_find_gpu("vllm", g);
	engine_speed_range(&c->s, &c->j, g, &c->eo, &c->er);
	c->have_er = isfinite(c->er.decode_low) && isfinite(c->er.decode_high);
	if (c->serve_eng) {
		engine_speed(c->serve_eng, &c->s, &c->j, g, &c->eo, &c->es);
		c->have_es = true;
		engine_serving(c->serve_eng, &c->s, &c->j, g, &c->eo, &c->sv);
		c->have_sv = true;
	}
}

static void
text_speed_infer(struct fit_ctx *c, struct strbuf *sb)
{
	const struct fit_job *j = &c->j;
	const struct engine_speed *es = &c->es;
	const struct engine_range *er = &c->er;

	if (c->eng && c->have_es) {
		strbuf_addf(
		        sb,
		        "  decode    %10.1f tokens/s per sequence, %.1f in all (%s %s): %.2f GB "
		        "read per step at %.0f %% of %.0f GB/s%s, %.2f ms fixed a step\n",
		        es->decode, es->decode_total, c->eng->name, c->eng->arch,
		        (es->weight_bytes + es->kv_bytes) / 1e9, 100 * c->eng->bw_eff,
		        es->bw_gbs * (c->eng->layer_split ? 1 : j->gpus),
		        c->eng->layer_split && j->gpus > 1 ? " (one GPU at a time)" : "",
		        1e3 * es->t_fixed);
		strbuf_addf(sb, "  prefill   %10.0f tokens/s at %.0f %% MFU of %.0f TFLOPS\n",
		            es->prefill, 100 * c->eng->mfu_prefill, es->peak_tflops * j->gpus);
		strbuf_addf(sb, "  (profile: %s; %s; data/engines/README.md)\n", c->eng->version,
		            c->eng->source);
	} else if (c->have_er) {
		strbuf_addf(sb,
		            "  decode    %.1f-%.1f tokens/s per sequence (%s .. %s), middle %.1f; "
		            "%.1f-%.1f in all\n",
		            er->decode_low, er->decode_high, er->decode_low_engine,
		            er->decode_high_engine, er->decode_mid, er->decode_total_low,
		            er->decode_total_high);
		strbuf_addf(sb, "  prefill   %.0f-%.0f tokens/s (%s .. %s), middle %.0f\n",
		            er->prefill_low, er->prefill_high, er->prefill_low_engine,
		            er->prefill_high_engine, er->prefill_mid);
		if (c->have_es)
			strbuf_addf(
			        sb,
			        "  (the common engines' profiles on %s: %.2f GB read a step, %.0f "
			        "GB/s in all; --engine NAME for one)\n",
			        c->speed_spec->arch, (es->weight_bytes + es->kv_bytes) / 1e9,
			        es->bw_gbs * j->gpus);
	}
	if (c->have_es && j->gpus > 1 && c->serve_eng->layer_split) {
		strbuf_addf(
		        sb,
		        "  %.0f GPUs split the layers (%s): one after the other, no all-reduce; a "
		        "sequence decodes at one GPU's pace\n",
		        j->gpus, c->serve_eng->name);
	} else if (c->have_es && j->gpus > 1) {
		double step = es->decode > 0 ? 1 / es->decode : NAN;
		double link = isfinite(c->eo.link_gbs)
		                      ? c->eo.link_gbs
		                      : engine_link_default_gbs(c->speed_spec, j->gpus);

		strbuf_addf(
		        sb,
		        "  tensor parallel over %.0f GPUs: 2 all-reduces a layer of %.0f KiB at "
		        "%.0f GB/s per GPU: %.2f of %.2f ms a step (%s)\n",
		        j->gpus, j->batch * c->s.hidden * 2 / 1024, link, 1e3 * es->t_comm,
		        1e3 * step, es->engine);
	}
	if (c->have_es && c->eo.experts > 0 && j->batch > 1) {
		double share =
		        engine_moe_read_share(c->eo.experts, c->eo.experts_per_token, j->batch);
		double one = engine_step_weight_bytes(&c->s, j, &c->eo, 1);

		strbuf_addf(sb,
		            "  MoE: a step of %.0f sequences touches %.0f %% of each layer's %.0f "
		            "routed experts (%.0f a token): %.2f GB read, not the %.2f GB of one\n",
		            j->batch, 100 * share, c->eo.experts, c->eo.experts_per_token,
		            es->weight_bytes / 1e9, one / 1e9);
	}
}

/*
 * Whose KV pool the serving figures follow: SGLang's own formula under
 * --engine sglang, vLLM's for every other engine (the other engines do not
 * pre-allocate a pool of their own that fit models); the speed at that batch
 * is --engine's.
 */
static const char *
pool_engine(const struct fit_ctx *c)
{
	return c->serve_eng && !strcmp(c->serve_eng->name, "sglang") ? "sglang" : "vllm";
}

static void
text_serving(struct fit_ctx *c, struct strbuf *sb)
{
	const struct engine_serving *sv = &c->sv;

	if (!c->have_sv)
		return;
	strbuf_addf(sb, "\nserving on %.0f x %s, the KV cache as %s allocates it:\n", c->j.gpus,
	            c->speed_spec->name, strcmp(pool_engine(c), "sglang") ? "vLLM" : "SGLang");
	if (!sv->fits) {
		strbuf_addf(
		        sb,
		        "  KV cache: %.0f tokens, not one sequence of %.0f tokens (pool %.2f GiB "
		        "per GPU after %.2f GiB of weights)\n",
		        fmax(0, sv->kv_cache_tokens), c->j.ctx, sv->kv_pool_bytes / GIB,
		        sv->weight_bytes / GIB);
		/* vLLM refuses to start so ("No available memory for the cache blocks"): say what
		 * frees it */
		strbuf_addf(sb,
		            "  per GPU: %.2f GiB x %.2g = %.2f, less weights %.2f, profile-run "
		            "activations %.2f, non-torch %.2f; vLLM would stop with \"No available "
		            "memory for the cache blocks\": raise --gpu-memory-utilization, lower "
		            "--max-num-seqs or --max-num-batched-tokens (the profile run's peak), "
		            "quantise (--precision fp8) or use more GPUs\n",
		            sv->total_bytes / GIB, c->eo.gpu_memory_utilization,
		            sv->budget_bytes / GIB, sv->weight_bytes / GIB,
		            sv->activation_bytes / GIB, sv->non_torch_bytes / GIB);
		return;
	}
	strbuf_addf(sb,
	            "  KV cache: %.0f tokens = %.0f sequence%s of %.0f tokens (%s, "
	            "gpu_memory_utilization %.2g, block %.0f); %.0f tokens/s in all at that "
	            "batch (%s)\n",
	            sv->kv_cache_tokens, sv->max_concurrent_seqs,
	            sv->max_concurrent_seqs == 1 ? "" : "s", c->j.ctx, pool_engine(c),
	            c->eo.gpu_memory_utilization, c->eo.block_size, sv->aggregate_tokens_per_s,
	            c->serve_eng ? c->serve_eng->name : "vllm");
	strbuf_addf(sb,
	            "  per GPU: %.2f GiB x %.2g = %.2f, less weights %.2f, profile-run "
	            "activations %.2f, non-torch %.2f: pool %.2f GiB; concurrency %.2fx",
	            sv->total_bytes / GIB, c->eo.gpu_memory_utilization, sv->budget_bytes / GIB,
	            sv->weight_bytes / GIB, sv->activation_bytes / GIB, sv->non_torch_bytes / GIB,
	            sv->kv_pool_bytes / GIB, sv->concurrency);
	if (sv->max_concurrent_seqs < floor(sv->concurrency))
		strbuf_addf(sb, " (capped at max_num_seqs, %.0f)", sv->max_concurrent_seqs);
	strbuf_addch(sb, '\n');
}

static void
text_speed(struct fit_ctx *c, struct strbuf *sb)
{
	const struct fit_speed *s = &c->sp;
	const struct fit_job *j = &c->j;

	if (!c->speed_spec) {
		strbuf_addstr(sb,
		              "\nspeed: no GPU of the spec table to judge it on (--gpu NAME)\n");
		return;
	}
	if (c->meas.bw || c->meas.flops) {
		strbuf_addf(sb, "\nspeed on %.0f x %s (measured figures where said; estimates)\n",
		            j->gpus, c->speed_spec->name);
		fit_measured_text(&c->meas, sb);
	} else {
		strbuf_addf(sb, "\nspeed on %.0f x %s (spec sheet; estimates, not measurements)\n",
		            j->gpus, c->speed_spec->name);
	}
	if (j->task == FIT_INFER) {
		text_speed_infer(c, sb);
	} else if (isfinite(s->train)) {
		strbuf_addf(
		        sb,
		        "  training  %10.0f tokens/s: %.0fN FLOPs per token at %.0f %% MFU of %.0f "
		        "TFLOPS\n",
		        s->train, s->flops_per_token / c->s.active, 100 * FIT_MFU,
		        s->peak_tflops * j->gpus);
	}
	if (j->task != FIT_INFER && isfinite(s->time_s))
		strbuf_addf(sb, "  %.3g tokens: %.2f h, %.1f kWh at %.0f W TDP per GPU\n",
		            j->tokens, s->time_s / 3600, s->energy_kwh, s->tdp_w);
	else if (j->task == FIT_INFER && j->tokens > 0 && c->have_es && c->es.decode_total > 0) {
		double rate = c->eng ? c->es.decode_total : c->er.decode_total_mid;
		double h = j->tokens / rate / 3600;

		strbuf_addf(sb,
		            "  %.3g tokens at batch %.0f: %.2f h, %.1f kWh at %.0f W TDP per GPU\n",
		            j->tokens, j->batch, h, h * j->gpus * s->tdp_w / 1e3, s->tdp_w);
	}
	text_serving(c, sb);
}

static void
json_rent_rows(struct fit_jw *jw, const struct fit_ctx *c, const char *key,
               const struct rent_row *rows, size_t n)
{
	fit_jw_open(jw, key, '[');
	for (size_t i = 0; i < n; i++) {
		const struct rent_row *r = &rows[i];

		fit_jw_open(jw, NULL, '{');
		fit_jw_str(jw, "name", r->g->name);
		fit_jw_num(jw, "gpus", r->k, 0);
		fit_jw_num(jw, "memory_bytes",
		           isfinite(r->g->mem_bytes) ? r->g->mem_bytes : fit_spec_bytes(r->g), 0);
		fit_jw_num(jw, "memory_usable_bytes", spec_cap(c, r->g), 0);
		fit_jw_num(jw, "price_per_hour", r->per_hour, 4);
		fit_jw_num(jw, "price_per_mtok", r->per_mtok, 4);
		fit_jw_num(jw, "price_per_run", r->per_run, 2);
		fit_jw_num(jw, "tokens_per_s", r->tokens_per_s, 1);
		fit_jw_str(jw, "price_provider", r->offer ? r->offer->provider : NULL);
		fit_jw_str(jw, "price_kind", r->offer ? price_kind_name(r->offer->kind) : NULL);
		fit_jw_str(jw, "price_date", r->offer ? r->offer->date_s : NULL);
		fit_jw_str(jw, "price_source", r->offer ? r->offer->source : NULL);
		fit_jw_close(jw, '}');
	}
	fit_jw_close(jw, ']');
}

static void
json_speed(struct fit_ctx *c, struct fit_jw *jw)
{
	const struct fit_speed *s = &c->sp;
	const struct fit_job *j = &c->j;
	bool infer = j->task == FIT_INFER;
	bool one = c->eng && c->have_es;

	fit_jw_open(jw, "speed", '{');
	fit_jw_str(jw, "gpu", c->speed_spec->name);
	fit_jw_num(jw, "bandwidth_gbs", c->meas.bw ? c->meas.bw_gbs : s->bw_gbs, 1);
	fit_jw_num(jw, "peak_tflops", c->meas.flops ? c->meas.tflops : s->peak_tflops, 1);
	fit_jw_num(jw, "bandwidth_sheet_equivalent_gbs", s->bw_gbs, 1);
	fit_jw_num(jw, "peak_tflops_sheet_equivalent", s->peak_tflops, 1);
	fit_jw_num(jw, "bytes_per_step",
	           infer && c->have_es ? c->es.weight_bytes + c->es.kv_bytes : s->bytes_per_step,
	           0);
	fit_jw_num(jw, "decode_bound_tokens_per_s",
	           infer && c->have_es ? c->es.decode_bound : s->decode_bound, 2);
	fit_jw_str(jw, "engine", one ? c->eng->name : NULL);
	fit_jw_str(jw, "engine_version", one ? c->eng->version : NULL);
	fit_jw_str(jw, "engine_source", one ? c->eng->source : NULL);
	fit_jw_num(jw, "decode_tokens_per_s",
	           !infer       ? NAN
	           : one        ? c->es.decode
	           : c->have_er ? c->er.decode_mid
	                        : s->decode,
	           2);
	fit_jw_num(jw, "decode_tokens_per_s_low", infer && c->have_er ? c->er.decode_low : NAN, 2);
	fit_jw_num(jw, "decode_tokens_per_s_high", infer && c->have_er ? c->er.decode_high : NAN,
	           2);
	fit_jw_str(jw, "decode_low_engine", infer && c->have_er ? c->er.decode_low_engine : NULL);
	fit_jw_str(jw, "decode_high_engine", infer && c->have_er ? c->er.decode_high_engine : NULL);
	fit_jw_num(jw, "decode_total_tokens_per_s",
	           !infer       ? NAN
	           : one        ? c->es.decode_total
	           : c->have_er ? c->er.decode_total_mid
	                        : s->decode_total,
	           2);
	fit_jw_num(jw, "prefill_tokens_per_s",
	           !infer       ? NAN
	           : one        ? c->es.prefill
	           : c->have_er ? c->er.prefill_mid
	                        : s->prefill,
	           1);
	fit_jw_num(jw, "prefill_tokens_per_s_low", infer && c->have_er ? c->er.prefill_low : NAN,
	           1);
	fit_jw_num(jw, "prefill_tokens_per_s_high", infer && c->have_er ? c->er.prefill_high : NAN,
	           1);
	fit_jw_num(jw, "tp_comm_s_per_step",
	           infer && c->have_es && j->gpus > 1 ? c->es.t_comm : NAN, 6);
	fit_jw_num(jw, "flops_per_token", s->flops_per_token > 0 ? s->flops_per_token : NAN, 0);
	fit_jw_num(jw, "train_tokens_per_s", s->train > 0 ? s->train : NAN, 1);
	fit_jw_num(jw, "time_s", s->time_s, 0);
	fit_jw_num(jw, "energy_kwh", s->energy_kwh, 2);
	fit_jw_num(jw, "tdp_w", s->tdp_w, 0);
	fit_jw_str(jw, "bandwidth_source", c->meas.bw ? "bench" : "spec");
	fit_jw_num(jw, "bandwidth_spec_gbs", c->meas.bw ? c->meas.spec_bw_gbs : s->bw_gbs, 1);
	fit_jw_num(jw, "bandwidth_measured_time", c->meas.bw ? c->meas.bw_time : NAN, 0);
	fit_jw_str(jw, "peak_tflops_source", c->meas.flops ? "bench" : "spec");
	fit_jw_str(jw, "peak_tflops_test", c->meas.flops ? c->meas.flops_test : NULL);
	fit_jw_num(jw, "peak_tflops_spec", c->meas.flops ? c->meas.spec_tflops : s->peak_tflops, 1);
	fit_jw_num(jw, "peak_tflops_measured_time", c->meas.flops ? c->meas.flops_time : NAN, 0);
	fit_jw_close(jw, '}');
}

static void
json_doc(struct fit_ctx *c, struct strbuf *sb, bool verdict, bool fit)
{
	struct fit_jw jw;
	const struct fit_mem *m = &c->mem;
	const struct fit_job *j = &c->j;

	fit_jw_begin(&jw, sb);
	fit_jw_str(&jw, "schema", FIT_SCHEMA);
	fit_jw_open(&jw, "model", '{');
	fit_jw_str(&jw, "name", c->m.name);
	fit_jw_num(&jw, "params", c->s.params, 0);
	fit_jw_num(&jw, "active_params", c->s.active, 0);
	fit_jw_num(&jw, "layers", c->s.layers, 0);
	fit_jw_num(&jw, "hidden", c->s.hidden, 0);
	fit_jw_num(&jw, "kv_bytes_per_token", c->s.kv_per_token * fit_job_kv_value_bytes(j), 0);
	fit_jw_num(&jw, "max_ctx", c->s.max_ctx > 0 ? c->s.max_ctx : NAN, 0);
	fit_jw_close(&jw, '}');
	fit_jw_open(&jw, "job", '{');
	fit_jw_str(&jw, "task", fit_task_name(j->task));
	fit_jw_str(&jw, "precision", weights_name(j));
	fit_jw_num(&jw, "group_size",
	           fit_job_quant(j) && fit_job_quant(j)->group_bits > 0 ? j->group_size : NAN, 0);
	fit_jw_str(&jw, "kv_cache", j->task == FIT_INFER ? kv_name(j) : NULL);
	fit_jw_num(&jw, "ctx", j->ctx, 0);
	fit_jw_num(&jw, "batch", j->batch, 0);
	fit_jw_num(&jw, "gpus", j->gpus, 0);
	fit_jw_str(&jw, "sharding", fit_shard_name(j->shard));
	fit_jw_bool(&jw, "checkpointing", j->checkpointing);
	fit_jw_bool(&jw, "checkpointing_default", !j->checkpointing_set);
	fit_jw_str(&jw, "trainer", j->task == FIT_INFER ? NULL : trainer_names[j->trainer]);
	fit_jw_bool(&jw, "pure_bf16", j->pure16);
	fit_jw_bool(&jw, "compile", j->compile);
	fit_jw_str(&jw, "offload", offload_names[j->offload]);
	fit_jw_str(&jw, "optimizer", j->task == FIT_INFER ? NULL : fit_optim_name(j->optim));
	fit_jw_num(&jw, "lora_rank",
	           j->task == FIT_LORA || j->task == FIT_QLORA ? j->lora_rank : NAN, 0);
	fit_jw_num(&jw, "tokens", j->tokens > 0 ? j->tokens : NAN, 0);
	fit_jw_close(&jw, '}');
	fit_jw_open(&jw, "memory", '{');
	fit_jw_num(&jw, "weights_bytes", m->weights, 0);
	fit_jw_num(&jw, "quantization_bytes", m->quant, 0);
	fit_jw_num(&jw, "unquantized_bytes", m->unquantised, 0);
	fit_jw_num(&jw, "dequant_bytes", m->dequant, 0);
	fit_jw_num(&jw, "gathered_bytes", m->gathered, 0);
	fit_jw_num(&jw, "gradients_bytes", m->gradients, 0);
	fit_jw_num(&jw, "optimizer_bytes", m->optimizer, 0);
	fit_jw_num(&jw, "adapters_bytes", m->adapters, 0);
	fit_jw_num(&jw, "activations_bytes", m->activations, 0);
	fit_jw_num(&jw, "logits_bytes", m->logits, 0);
	fit_jw_num(&jw, "kv_cache_bytes", m->kv_cache, 0);
	fit_jw_num(&jw, "cuda_context_bytes", m->cuda, 0);
	fit_jw_num(&jw, "framework_bytes", m->framework, 0);
	fit_jw_num(&jw, "total_bytes", m->total, 0);
	fit_jw_num(&jw, "host_bytes", m->host, 0);
	fit_jw_num(&jw, "trainable_params", m->trainable, 0);
	fit_jw_close(&jw, '}');
	if (m->host > 0) {
		fit_jw_open(&jw, "host", '{');
		fit_jw_num(&jw, "ram_total_bytes", c->ram.read ? c->ram.total : NAN, 0);
		fit_jw_num(&jw, "ram_available_bytes", c->ram.read ? c->ram.avail : NAN, 0);
		if (c->ram.read)
			fit_jw_bool(&jw, "fits", c->ram.fits);
		else
			fit_jw_null(&jw, "fits");
		fit_jw_close(&jw, '}');
	} else {
		fit_jw_null(&jw, "host");
	}
	fit_jw_open(&jw, "assumptions", '{');
	fit_jw_num(&jw, "bandwidth_efficiency",
	           j->task == FIT_INFER && c->eng ? c->eng->bw_eff : FIT_BW_EFFICIENCY, 2);
	fit_jw_num(&jw, "mfu", j->task == FIT_INFER && c->eng ? c->eng->mfu_prefill : FIT_MFU, 2);
	fit_jw_num(&jw, "framework_share",
	           j->task == FIT_INFER ? FIT_FRAMEWORK_INFER : FIT_FRAMEWORK_TRAIN, 2);
	fit_jw_num(&jw, "stream_share", FIT_STREAM_SHARE, 2);
	fit_jw_num(&jw, "gemm_share", FIT_GEMM_SHARE, 2);
	fit_jw_close(&jw, '}');
	fit_jw_open(&jw, "targets", '[');
	for (size_t i = 0; i < c->nr_t; i++) {
		const struct target *t = &c->t[i];

		fit_jw_open(&jw, NULL, '{');
		fit_jw_str(&jw, "name", t->label);
		fit_jw_str(&jw, "source", t->local ? "local" : "spec");
		fit_jw_str(&jw, "spec", t->spec ? t->spec->name : NULL);
		fit_jw_num(&jw, "gpus", t->count, 0);
		fit_jw_num(&jw, "memory_total_bytes", t->total, 0);
		fit_jw_num(&jw, "memory_usable_bytes", t->usable, 0);
		fit_jw_num(&jw, "memory_free_bytes", t->free, 0);
		fit_jw_bool(&jw, "fits", t->fits);
		fit_jw_bool(&jw, "fits_when_free", t->fits_idle);
		fit_jw_num(&jw, "margin_bytes", t->margin, 0);
		fit_jw_num(&jw, "max_batch", t->max_batch, 0);
		fit_jw_num(&jw, "max_ctx", t->max_ctx, 0);
		fit_jw_bool(&jw, "judged_by_engine", t->served);
		fit_jw_close(&jw, '}');
	}
	fit_jw_close(&jw, ']');
	if (c->speed_spec)
		json_speed(c, &jw);
	else
		fit_jw_null(&jw, "speed");
	if (c->have_sv) {
		const struct engine_serving *sv = &c->sv;

		fit_jw_open(&jw, "serving", '{');
		fit_jw_str(&jw, "engine", pool_engine(c));
		fit_jw_str(&jw, "speed_engine", c->serve_eng ? c->serve_eng->name : "vllm");
		fit_jw_num(&jw, "gpu_memory_utilization", c->eo.gpu_memory_utilization, 2);
		fit_jw_num(&jw, "block_size", c->eo.block_size, 0);
		fit_jw_num(&jw, "kv_pool_bytes", round(sv->kv_pool_bytes), 0);
		fit_jw_num(&jw, "kv_cache_tokens", fmax(0, sv->kv_cache_tokens), 0);
		fit_jw_num(&jw, "max_concurrent_seqs", fmax(0, sv->max_concurrent_seqs), 0);
		fit_jw_num(&jw, "concurrency", fmax(0, sv->concurrency), 2);
		fit_jw_num(&jw, "aggregate_tokens_per_s",
		           sv->fits ? sv->aggregate_tokens_per_s : NAN, 1);
		fit_jw_bool(&jw, "fits", sv->fits);
		fit_jw_close(&jw, '}');
	} else {
		fit_jw_null(&jw, "serving");
	}
	if (c->rent) {
		fit_jw_open(&jw, "rent", '{');
		json_rent_rows(&jw, c, "single", c->rent1, c->nr_rent1);
		json_rent_rows(&jw, c, "multi", c->rentn, c->nr_rentn);
		fit_jw_open(&jw, "prices", '{');
		fit_jw_str(&jw, "origin", c->have_prices ? c->pt.origin : NULL);
		fit_jw_str(&jw, "newest",
		           c->have_prices && c->pt.newest >= 0 ? price_newest_s(&c->pt) : NULL);
		fit_jw_num(&jw, "age_days", c->have_prices ? price_age_days(&c->pt, c->now) : NAN,
		           0);
		fit_jw_bool(&jw, "old", c->have_prices && price_is_old(&c->pt, c->now));
		fit_jw_close(&jw, '}');
		fit_jw_close(&jw, '}');
	}
	if (verdict)
		fit_jw_bool(&jw, "fits", fit);
	else
		fit_jw_null(&jw, "fits");
	fit_jw_end(&jw);
}

static int
list_models(void)
{
	const struct model_cfg *m;
	size_t n = model_catalog(&m);

	for (size_t i = 0; i < n; i++)
		printf("%-32s %s%s%s%s\n", m[i].name, m[i].family,
		       m[i].aliases && m[i].aliases[0] ? " (also " : "",
		       m[i].aliases && m[i].aliases[0] ? m[i].aliases : "",
		       m[i].aliases && m[i].aliases[0] ? ")" : "");
	return EXIT_OK;
}

static int
usage_error(const char *msg)
{
	cmd_error("%s", msg);
	return EXIT_USAGE;
}

/* "a, b, c or d" of the plain precisions and the formats, for --precision's error. */
static void
precision_names(struct strbuf *sb)
{
	static const char *const plain[] = { "fp32", "bf16", "fp16", "fp8", "int8", "int4" };
	const struct fit_quant *q;
	size_t n = fit_quants(&q);

	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		strbuf_addf(sb, "%s%s", i ? ", " : "", plain[i]);
	for (size_t i = 0; i < n; i++)
		if (fit_prec_parse(q[i].name) < 0)
			strbuf_addf(sb, ", %s", q[i].name);
}

static void
kv_names(struct strbuf *sb)
{
	const struct fit_kv_type *kv;
	size_t n = fit_kv_types(&kv);

	for (size_t i = 0; i < n; i++)
		strbuf_addf(sb, "%s%s", i ? (i + 1 == n ? " or " : ", ") : "", kv[i].name);
}

int
cmd_fit(int argc, char **argv, struct gs_config *cfg)
{
	enum {
		OPT_TASK = 256,
		OPT_PREC,
		OPT_CTX,
		OPT_BATCH,
		OPT_GPUS,
		OPT_GPU,
		OPT_ZERO,
		OPT_FSDP,
		OPT_CKPT,
		OPT_NOCKPT,
		OPT_TRAINER,
		OPT_PURE,
		OPT_COMPILE,
		OPT_OFFLOAD,
		OPT_GROUP,
		OPT_KV,
		OPT_ENGINE,
		OPT_GMU,
		OPT_BLOCK,
		OPT_MNBT,
		OPT_MNS,
		OPT_PRICES,
		OPT_OPTIM,
		OPT_RANK,
		OPT_TOKENS,
		OPT_RENT,
		OPT_LIST
	};
	static const struct option opts[] = {
		{ "task", required_argument, NULL, OPT_TASK },
		{ "precision", required_argument, NULL, OPT_PREC },
		{ "quant", required_argument, NULL, OPT_PREC },
		{ "group-size", required_argument, NULL, OPT_GROUP },
		{ "ctx", required_argument, NULL, OPT_CTX },
		{ "batch", required_argument, NULL, OPT_BATCH },
		{ "gpus", required_argument, NULL, OPT_GPUS },
		{ "gpu", required_argument, NULL, OPT_GPU },
		{ "zero", required_argument, NULL, OPT_ZERO },
		{ "fsdp", no_argument, NULL, OPT_FSDP },
		{ "checkpointing", no_argument, NULL, OPT_CKPT },
		{ "no-checkpointing", no_argument, NULL, OPT_NOCKPT },
		{ "trainer", required_argument, NULL, OPT_TRAINER },
		{ "pure-bf16", no_argument, NULL, OPT_PURE },
		{ "compile", no_argument, NULL, OPT_COMPILE },
		{ "offload", required_argument, NULL, OPT_OFFLOAD },
		{ "kv-cache", required_argument, NULL, OPT_KV },
		{ "engine", required_argument, NULL, OPT_ENGINE },
		{ "gpu-memory-utilization", required_argument, NULL, OPT_GMU },
		{ "block-size", required_argument, NULL, OPT_BLOCK },
		{ "max-num-batched-tokens", required_argument, NULL, OPT_MNBT },
		{ "max-num-seqs", required_argument, NULL, OPT_MNS },
		{ "prices", required_argument, NULL, OPT_PRICES },
		{ "optimizer", required_argument, NULL, OPT_OPTIM },
		{ "lora-rank", required_argument, NULL, OPT_RANK },
		{ "tokens", required_argument, NULL, OPT_TOKENS },
		{ "rent", no_argument, NULL, OPT_RENT },
		{ "json", no_argument, NULL, 'j' },
		{ "list", no_argument, NULL, OPT_LIST },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct fit_ctx *c = xcalloc(1, sizeof(*c));
	struct err err = ERR_INIT;
	struct strbuf out = STRBUF_INIT, names = STRBUF_INIT;
	const char *gpu_names = NULL;
	bool json = false, prec_set = false, rank_set = false, optim_set = false, zero = false,
	     fsdp = false, ckpt_on = false, ckpt_off = false, group_set = false, verdict,
	     fit = false;
	/* options that only one kind of job takes, named for the error */
	const char *train_only = NULL, *infer_only = NULL;
	int opt, rc = EXIT_OK, v;
	double d;

	fit_job_init(&c->j);
	engine_opts_init(&c->eo);
	c->t = xcalloc(MAX_TARGETS, sizeof(*c->t));
	c->now = time(NULL);
	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":jh", opts, NULL)) != -1) {
		switch (opt) {
		case OPT_TASK:
			if ((v = fit_task_parse(optarg)) < 0) {
				rc = usage_error("--task: infer, full, freeze, lora or qlora");
				goto out;
			}
			c->j.task = v;
			break;
		case OPT_PREC:
			if ((v = fit_prec_parse(optarg)) >= 0) {
				c->j.prec = v;
				c->j.quant = -1;
			} else if ((v = fit_quant_find(optarg)) >= 0) {
				const struct fit_quant *q;

				fit_quants(&q);
				c->j.quant = v;
				c->j.prec = q[v].prec;
			} else {
				precision_names(&names);
				cmd_error("--precision '%s': %s", optarg, names.buf);
				rc = EXIT_USAGE;
				goto out;
			}
			prec_set = true;
			break;
		case OPT_CTX:
		case OPT_BATCH:
		case OPT_GPUS:
		case OPT_RANK:
		case OPT_GROUP:
		case OPT_BLOCK:
		case OPT_MNBT:
		case OPT_MNS:
			if (parse_count(optarg, opt == OPT_CTX || opt == OPT_MNBT ? 1024 : 1000,
			                &d) < 0 ||
			    d <= 0 || d != floor(d) || (opt == OPT_BLOCK && d > 1024) ||
			    (opt == OPT_GROUP && d > 65536)) {
				cmd_error("--%s '%s': a whole number above 0%s",
				          opt == OPT_CTX     ? "ctx"
				          : opt == OPT_BATCH ? "batch"
				          : opt == OPT_GPUS  ? "gpus"
				          : opt == OPT_GROUP ? "group-size"
				          : opt == OPT_BLOCK ? "block-size"
				          : opt == OPT_MNBT  ? "max-num-batched-tokens"
				          : opt == OPT_MNS   ? "max-num-seqs"
				                             : "lora-rank",
				          optarg,
				          opt == OPT_BLOCK
				                  ? ", at most 1024 tokens (vLLM: 8, 16, 32...)"
				          : opt == OPT_GROUP
				                  ? ", at most 65536 (awq and gptq: 32, 64, 128)"
				                  : "");
				rc = EXIT_USAGE;
				goto out;
			}
			if (opt == OPT_CTX)
				c->j.ctx = d;
			else if (opt == OPT_BATCH)
				c->j.batch = d;
			else if (opt == OPT_GPUS)
				c->j.gpus = d;
			else if (opt == OPT_GROUP)
				c->j.group_size = d, group_set = true;
			else if (opt == OPT_BLOCK)
				c->eo.block_size = d, infer_only = "--block-size";
			else if (opt == OPT_MNBT)
				c->eo.max_num_batched_tokens = d,
				infer_only = "--max-num-batched-tokens";
			else if (opt == OPT_MNS)
				c->eo.max_num_seqs = d, infer_only = "--max-num-seqs";
			else
				c->j.lora_rank = d, rank_set = true;
			break;
		case OPT_GPU:
			gpu_names = optarg;
			break;
		case OPT_ZERO:
			if (strlen(optarg) != 1 || optarg[0] < '1' || optarg[0] > '3') {
				rc = usage_error("--zero: stage 1, 2 or 3");
				goto out;
			}
			c->j.shard = (enum fit_shard)(FIT_ZERO1 + (optarg[0] - '1'));
			zero = true;
			break;
		case OPT_FSDP:
			c->j.shard = FIT_FSDP;
			fsdp = true;
			break;
		case OPT_CKPT:
		case OPT_NOCKPT:
			c->j.checkpointing = opt == OPT_CKPT;
			c->j.checkpointing_set = true;
			if (opt == OPT_CKPT)
				ckpt_on = true;
			else
				ckpt_off = true, train_only = "--no-checkpointing";
			break;
		case OPT_TRAINER:
			if ((v = name_index(trainer_names, 5, optarg)) < 0) {
				cmd_error(
				        "--trainer '%s': hf, llama-factory, unsloth, axolotl or torchtune",
				        optarg);
				rc = EXIT_USAGE;
				goto out;
			}
			c->j.trainer = (enum fit_trainer)v;
			train_only = "--trainer";
			break;
		case OPT_COMPILE:
			c->j.compile = true;
			train_only = "--compile";
			break;
		case OPT_PURE:
			c->j.pure16 = true;
			train_only = "--pure-bf16";
			break;
		case OPT_OFFLOAD:
			if ((v = name_index(offload_names, 4, optarg)) <= 0) {
				cmd_error("--offload '%s': optimizer, params or all", optarg);
				rc = EXIT_USAGE;
				goto out;
			}
			c->j.offload = (enum fit_offload)v;
			train_only = "--offload";
			break;
		case OPT_KV:
			if ((v = fit_kv_find(optarg)) < 0) {
				kv_names(&names);
				cmd_error("--kv-cache '%s': %s", optarg, names.buf);
				rc = EXIT_USAGE;
				goto out;
			}
			c->j.kv_cache = v;
			infer_only = "--kv-cache";
			break;
		case OPT_ENGINE:
			if (!(c->engine = engine_canonical(optarg))) {
				cmd_error("--engine '%s': %s", optarg, engine_names());
				rc = EXIT_USAGE;
				goto out;
			}
			infer_only = "--engine";
			break;
		case OPT_GMU:
			if (parse_fraction(optarg, &d) < 0) {
				cmd_error(
				        "--gpu-memory-utilization '%s': a share above 0 and at most 1 "
				        "(vLLM's default 0.9)",
				        optarg);
				rc = EXIT_USAGE;
				goto out;
			}
			c->eo.gpu_memory_utilization = d;
			infer_only = "--gpu-memory-utilization";
			break;
		case OPT_PRICES:
			c->prices_file = optarg;
			break;
		case OPT_OPTIM:
			if ((v = fit_optim_parse(optarg)) < 0) {
				rc = usage_error("--optimizer: adamw, adamw-8bit or sgd");
				goto out;
			}
			c->j.optim = v;
			optim_set = true;
			break;
		case OPT_TOKENS:
			if (parse_tokens(optarg, &d) < 0 || d <= 0) {
				rc = usage_error(
				        "--tokens: a number of tokens above 0 (2e9, 500M, 10B, 1.5T)");
				goto out;
			}
			c->j.tokens = d;
			break;
		case OPT_RENT:
			c->rent = true;
			break;
		case 'j':
			json = true;
			break;
		case OPT_LIST:
			rc = list_models();
			goto out;
		default:
			rc = cmd_common_option(opt, argv, cfg, NULL, fit_usage);
			if (rc != CMD_NEXT_OPTION)
				goto out;
			rc = EXIT_OK;
		}
	}
	if (zero && fsdp) {
		rc = usage_error("--zero and --fsdp are two ways of sharding: one or the other");
		goto out;
	}
	if (ckpt_on && ckpt_off) {
		rc = usage_error("--checkpointing and --no-checkpointing: one or the other");
		goto out;
	}
	if (rank_set && c->j.task != FIT_LORA && c->j.task != FIT_QLORA) {
		rc = usage_error("--lora-rank goes with --task lora or qlora");
		goto out;
	}
	if (optim_set && c->j.task == FIT_INFER) {
		rc = usage_error(
		        "--optimizer is for training (--task full, freeze, lora or qlora)");
		goto out;
	}
	if (train_only && c->j.task == FIT_INFER) {
		cmd_error("%s is for training (--task full, freeze, lora or qlora)", train_only);
		rc = EXIT_USAGE;
		goto out;
	}
	if (infer_only && c->j.task != FIT_INFER) {
		cmd_error("%s is for inference (--task infer): serving engines and their KV cache",
		          infer_only);
		rc = EXIT_USAGE;
		goto out;
	}
	if (gpu_names && c->rent) {
		rc = usage_error("--gpu judges named GPUs, --rent finds some: one or the other");
		goto out;
	}
	if (c->prices_file && !c->rent) {
		rc = usage_error("--prices FILE goes with --rent (it prices the GPUs to rent)");
		goto out;
	}
	if (group_set && !(fit_job_quant(&c->j) && fit_job_quant(&c->j)->group_bits > 0)) {
		rc = usage_error("--group-size is for --precision awq or gptq (weights per scale)");
		goto out;
	}
	/* llama.cpp's memory habits (fit.h: compute buffer, exact allocation, embeddings on the
	 * CPU) */
	if (c->engine && !strcmp(c->engine, "llama.cpp"))
		c->j.ggml = true;
	if (c->j.task == FIT_QLORA && !prec_set) {
		c->j.prec = FIT_INT4;
		c->j.quant = fit_quant_find("nf4");
	}
	if (fit_job_check(&c->j, &err) < 0) {
		rc = usage_error(err.msg);
		goto out;
	}
	if (!c->j.checkpointing_set)
		c->j.checkpointing = fit_job_checkpointing(&c->j);
	if (optind != argc - 1) {
		if (optind >= argc)
			cmd_error("fit needs a MODEL: a catalog name ('gpuscope fit --list'), a "
			          "config.json or a size such as 7b");
		else
			cmd_error("unexpected argument '%s'", argv[optind + 1]);
		rc = EXIT_USAGE;
		goto out;
	}
	if (model_resolve(argv[optind], &c->m, &err) < 0) {
		cmd_error("%s", err.msg[0] ? err.msg : "unknown model");
		rc = EXIT_USAGE;
		goto out;
	}
	fit_shape_from_model(&c->m, &c->s);
	if (!(c->s.params > 0) || !(c->s.layers > 0) || !(c->s.hidden > 0)) {
		cmd_error("%s: its parameter count cannot be worked out", argv[optind]);
		rc = EXIT_USAGE;
		goto out;
	}
	engine_opts_from_model(&c->eo, &c->m);
	if (c->rent) {
		rc = c->prices_file ? price_load_file(&c->pt, c->prices_file, &err)
		                    : price_load_builtin(&c->pt, &err);
		if (rc < 0) {
			cmd_error("%s", err.msg[0] ? err.msg : "the price table cannot be read");
			rc = EXIT_USAGE;
			goto out;
		}
		rc = EXIT_OK;
		c->have_prices = true;
	}
	fit_memory(&c->s, &c->j, &c->mem);
	if (c->mem.host > 0) {
		c->ram.read = read_meminfo(cfg->proc_root, &c->ram.total, &c->ram.avail);
		c->ram.fits = !c->ram.read || c->mem.host <= c->ram.total;
	}

	if (gpu_names) {
		if ((rc = add_named(c, gpu_names)) != EXIT_OK)
			goto out;
	} else if (!c->rent) {
		c->local_asked = true;
		read_local(c, cfg);
	}
	for (size_t i = 0; i < c->nr_t && !c->speed_spec; i++)
		if (!use_measured(c, &c->t[i], cfg))
			c->speed_spec = c->t[i].spec;
	if (c->meas.bw)
		c->eo.bw_gbs = c->meas.equiv.mem_bw_gbs;
	if (c->meas.flops)
		c->eo.peak_tflops = fit_peak_tflops(&c->meas.equiv, &c->j);
	if (c->rent)
		rent(c);
	if (c->speed_spec) {
		fit_speed(&c->s, &c->j, c->speed_spec, &c->sp);
		engine_figures(c);
	}

	/* the verdict: named GPUs, any fits; this machine, enough GPUs fit; --rent, something */
	verdict = c->nr_t > 0 || c->rent;
	if (c->local_read && c->nr_t)
		fit = (double)c->local_fitting >= c->j.gpus;
	else if (c->nr_t)
		for (size_t i = 0; i < c->nr_t; i++)
			fit = fit || c->t[i].fits;
	else if (c->rent)
		fit = c->nr_rent1 + c->nr_rentn > 0;
	/* offloading to host memory this machine does not have does not fit either */
	if (c->mem.host > 0 && c->ram.read && !c->ram.fits) {
		verdict = true;
		fit = false;
	}
	if (json) {
		json_doc(c, &out, verdict, fit);
	} else {
		text_memory(c, &out);
		text_targets(c, &out);
		text_host(c, &out);
		text_rent(c, &out);
		text_speed(c, &out);
		if (c->j.task == FIT_INFER && c->s.max_ctx > 0 && c->j.ctx > c->s.max_ctx)
			strbuf_addf(&out, "note: --ctx %.0f is past the model's context of %.0f\n",
			            c->j.ctx, c->s.max_ctx);
	}
	if (fwrite(out.buf, 1, out.len, stdout) != out.len || fflush(stdout) != 0) {
		cmd_error("writing the output: %s", strerror(errno));
		rc = EXIT_RUNTIME;
		goto out;
	}
	rc = verdict && !fit ? EXIT_PROBLEMS : EXIT_OK;
out:
	if (c->have_prices)
		price_free(&c->pt);
	strbuf_release(&names);
	strbuf_release(&out);
	free(c->t);
	free(c);
	return rc;
}
