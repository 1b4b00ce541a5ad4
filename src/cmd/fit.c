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

#include "backend/collect.h"
#include "core/benchstore.h"
#include "core/config.h"
#include "core/err.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "fit/fit.h"
#include "fit/measured.h"
#include "fit/models.h"
#include "core/specs.h"

#define GIB         1073741824.0
#define FIT_SCHEMA  "gpuscope.fit/1"
#define RENT_SHOWN  6
#define MAX_TARGETS 64

static void
fit_usage(FILE *f)
{
	fputs("usage: gpuscope fit MODEL [--task infer|full|freeze|lora|qlora]\n"
	      "         [--precision fp32|bf16|fp16|fp8|int8|int4] [--ctx N] [--batch N] [--gpus N]\n"
	      "         [--gpu NAME[,NAME...] | --rent] [--zero 1|2|3 | --fsdp] [--checkpointing]\n"
	      "         [--optimizer adamw|adamw-8bit|sgd] [--lora-rank R] [--tokens T] [--json]\n"
	      "How much GPU memory MODEL needs (weights, gradients, optimizer states, activations,\n"
	      "KV cache, adapters, quantisation constants, CUDA context and framework), per GPU;\n"
	      "whether it fits on this machine's GPUs (free memory now), on named GPUs or which to\n"
	      "rent; and how fast it goes. MODEL: a catalog name ('gpuscope fit --list'), a\n"
	      "Hugging Face config.json, or a size such as 7b or 8x7b.\n"
	      "      --task=TASK     infer (default), full (full fine-tuning or pre-training), freeze\n"
	      "                      (the last 2 layers), lora, qlora (LoRA on 4- or 8-bit weights)\n"
	      "      --precision=P   weights: fp32, bf16 (default; qlora: int4), fp16, fp8, int8, int4\n"
	      "      --ctx=N         tokens per sequence (default 4096; \"32k\" = 32768)\n"
	      "      --batch=N       sequences: in all for inference, per GPU for training (default 1)\n"
	      "      --gpus=N        GPUs: tensor parallel for inference, data parallel for training\n"
	      "      --gpu=NAME,...  judge against these GPUs of the spec table ('gpuscope specs')\n"
	      "                      instead of this machine's\n"
	      "      --rent          the smallest GPUs of the spec table that fit, 1 or several\n"
	      "      --zero=STAGE    DeepSpeed ZeRO stage 1, 2 or 3 over --gpus\n"
	      "      --fsdp          PyTorch FSDP (full sharding) over --gpus\n"
	      "      --checkpointing activation checkpointing (keep layer inputs, recompute the rest)\n"
	      "      --optimizer=O   adamw (default), adamw-8bit, sgd (with momentum)\n"
	      "      --lora-rank=R   LoRA rank (default 8), adapters on every linear layer\n"
	      "      --tokens=T      time and energy for a run of T tokens (\"2e9\", \"10B\", \"1.5T\")\n"
	      "  -j, --json          one JSON document (schema gpuscope.fit/1, docs/json-schema.md)\n"
	      "      --list          the model catalog\n"
	      "exit status: 0 fits (or nothing to judge), 1 does not fit on the GPUs asked about,\n"
	      "2 usage error\n",
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

/* What a verdict is about: a GPU of this machine, or GPUs of the spec table. */
struct target {
	char label[128];
	const struct gpu_spec *spec; /* NULL when the table does not know it */
	bool local;
	char uuid[96];      /* local: the GPU's, for its figures measured by gpuscope bench */
	double total, free; /* bytes of one GPU; free NAN for the spec table */
	double count;       /* GPUs of this kind the job uses */
	bool fits;          /* in free memory (local) or in total (spec) */
	bool fits_idle;     /* local: would fit were the GPU free */
	double margin, max_batch, max_ctx;
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
	const struct gpu_spec *rent1[RENT_SHOWN], *rentn[RENT_SHOWN];
	double rentn_k[RENT_SHOWN];
	size_t nr_rent1, nr_rentn;
};

static void
judge(struct fit_ctx *c, struct target *t)
{
	double cap = t->local ? t->free : t->total;
	struct fit_job j = c->j;

	j.gpus = t->count;
	t->margin = cap - c->mem.total;
	t->fits = isfinite(cap) && c->mem.total <= cap;
	t->fits_idle = isfinite(t->total) && c->mem.total <= t->total;
	t->max_batch = isfinite(cap) ? fit_max_batch(&c->s, &j, cap) : NAN;
	t->max_ctx = isfinite(cap) ? fit_max_ctx(&c->s, &j, cap, c->s.max_ctx) : NAN;
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
			struct target *t = &c->t[c->nr_t++];

			memset(t, 0, sizeof(*t));
			snprintf(t->label, sizeof(t->label), "%u %s", d->index,
			         d->name[0] ? d->name : "GPU");
			t->local = true;
			t->spec = gpu_spec_match(d);
			snprintf(t->uuid, sizeof(t->uuid), "%s", d->uuid);
			t->total = dev_get(d, GF_MEM_TOTAL);
			t->free = dev_get(d, GF_MEM_FREE);
			if (!isfinite(t->free) && isfinite(t->total) && dev_has(d, GF_MEM_USED))
				t->free = t->total - dev_get(d, GF_MEM_USED);
			t->count = c->j.gpus;
			judge(c, t);
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
			c->measured_spec.name = t->label;
		c->speed_spec = &c->measured_spec;
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
		t->total = fit_spec_bytes(g);
		t->free = NAN;
		t->count = c->j.gpus;
		judge(c, t);
	}
	free(names);
	return EXIT_OK;
}

static bool
fits_on(const struct fit_ctx *c, const struct gpu_spec *g, double k)
{
	struct fit_job j = c->j;
	struct fit_mem m;

	j.gpus = k;
	if (k > 1 && j.task != FIT_INFER && j.shard == FIT_SHARD_NONE)
		j.shard = FIT_FSDP; /* several GPUs only help training when it shards */
	if (k == 1)
		j.shard = FIT_SHARD_NONE;
	fit_memory(&c->s, &j, &m);
	return m.total <= fit_spec_bytes(g);
}

static int
cmp_rent(const void *a, const void *b)
{
	const struct gpu_spec *x = *(const struct gpu_spec *const *)a;
	const struct gpu_spec *y = *(const struct gpu_spec *const *)b;
	double dx = fit_spec_bytes(x), dy = fit_spec_bytes(y);

	if (dx != dy)
		return dx < dy ? -1 : 1;
	return (isfinite(y->mem_bw_gbs) ? y->mem_bw_gbs : 0) >
	                       (isfinite(x->mem_bw_gbs) ? x->mem_bw_gbs : 0)
	               ? 1
	               : -1;
}

/* --rent: the smallest rows that fit on one GPU, and on 2, 4 or 8. */
static void
rent(struct fit_ctx *c)
{
	const struct gpu_spec *rows, **sorted;
	size_t n = gpu_specs(&rows);

	if (!n)
		return;
	sorted = xcalloc(n, sizeof(*sorted));
	for (size_t i = 0; i < n; i++)
		sorted[i] = &rows[i];
	qsort(sorted, n, sizeof(*sorted), cmp_rent);
	for (size_t i = 0; i < n; i++) {
		const struct gpu_spec *g = sorted[i];

		if (!(fit_spec_bytes(g) > 0))
			continue;
		if (fits_on(c, g, 1)) {
			if (c->nr_rent1 < RENT_SHOWN)
				c->rent1[c->nr_rent1++] = g;
			continue;
		}
		for (double k = 2; k <= 8; k *= 2) {
			if (fits_on(c, g, k)) {
				size_t at = c->nr_rentn;

				/* keep the smallest k x memory first */
				while (at > 0 &&
				       c->rentn_k[at - 1] * fit_spec_bytes(c->rentn[at - 1]) >
				               k * fit_spec_bytes(g))
					at--;
				if (at < RENT_SHOWN) {
					size_t last = c->nr_rentn < RENT_SHOWN ? c->nr_rentn
					                                       : RENT_SHOWN - 1;

					for (size_t x = last; x > at; x--) {
						c->rentn[x] = c->rentn[x - 1];
						c->rentn_k[x] = c->rentn_k[x - 1];
					}
					c->rentn[at] = g;
					c->rentn_k[at] = k;
					if (c->nr_rentn < RENT_SHOWN)
						c->nr_rentn++;
				}
				break;
			}
		}
	}
	if (!c->speed_spec && c->nr_rent1)
		c->speed_spec = c->rent1[0];
	free(sorted);
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

static void
text_memory(struct fit_ctx *c, struct strbuf *sb)
{
	const struct fit_mem *m = &c->mem;
	const struct fit_job *j = &c->j;
	char a[32], b[32], why[256];
	bool train = j->task != FIT_INFER;

	strbuf_addf(sb, "%s: %s parameters", c->m.name[0] ? c->m.name : "model",
	            count_str(c->s.params, a, sizeof(a)));
	if (c->s.active < c->s.params)
		strbuf_addf(sb, " (%s active)", count_str(c->s.active, b, sizeof(b)));
	strbuf_addf(sb, "; %s, %s, ctx %.0f, batch %.0f%s, %.0f GPU%s", fit_task_name(j->task),
	            fit_prec_name(j->prec), j->ctx, j->batch, train ? " per GPU" : "", j->gpus,
	            j->gpus > 1 ? "s" : "");
	if (j->shard != FIT_SHARD_NONE)
		strbuf_addf(sb, ", %s", fit_shard_name(j->shard));
	if (j->checkpointing)
		strbuf_addstr(sb, ", checkpointing");
	if (train)
		strbuf_addf(sb, ", %s", fit_optim_name(j->optim));
	strbuf_addf(sb, "\n\nmemory per GPU%*s\n", 19, "GiB");
	snprintf(why, sizeof(why), "%s params x %g bytes (%s)%s",
	         count_str(c->s.params, a, sizeof(a)),
	         j->task == FIT_FULL || j->task == FIT_FREEZE ? (j->prec == FIT_FP32 ? 4.0 : 2.0)
	                                                      : fit_weight_bytes(j->prec),
	         j->task == FIT_FULL || j->task == FIT_FREEZE
	                 ? (j->prec == FIT_FP32 ? "fp32" : "16-bit")
	                 : fit_prec_name(j->prec),
	         j->shard >= FIT_ZERO3   ? ", sharded"
	         : !train && j->gpus > 1 ? ", tensor parallel"
	                                 : "");
	mem_line(sb, "weights", m->weights, why);
	snprintf(why, sizeof(why), "%.3g bits per weight of scales",
	         fit_quant_bits(j->prec, j->task));
	mem_line(sb, "quantisation scales", m->quant, why);
	mem_line(sb, "gathered layer", m->gathered,
	         "4 x the largest layer, unsharded while in use");
	snprintf(why, sizeof(why), "%s trained params%s", count_str(m->trainable, a, sizeof(a)),
	         j->shard >= FIT_ZERO2 ? ", sharded" : "");
	mem_line(sb, "gradients", m->gradients, why);
	snprintf(why, sizeof(why), "%s%s", fit_optim_name(j->optim),
	         j->shard >= FIT_ZERO1 ? ", sharded" : "");
	mem_line(sb, "optimizer states", m->optimizer, why);
	snprintf(why, sizeof(why), "rank %.0f on every linear layer, fp32", j->lora_rank);
	mem_line(sb, "LoRA adapters", m->adapters, why);
	if (train)
		snprintf(why, sizeof(why), "%s, logits",
		         j->checkpointing ? "layer inputs, one layer recomputed"
		                          : "every layer, FlashAttention");
	else
		snprintf(why, sizeof(why), "one layer over a %.0f-token prefill chunk",
		         fmin(j->ctx, FIT_PREFILL_CHUNK));
	mem_line(sb, "activations", m->activations, why);
	snprintf(why, sizeof(why), "%.0f KiB/token x %.0f tokens x %.0f sequence%s%s",
	         c->s.kv_per_token * fit_kv_value_bytes(j->prec) / 1024, j->ctx, j->batch,
	         j->batch > 1 ? "s" : "", c->s.window > 0 ? " (windowed layers capped)" : "");
	mem_line(sb, "KV cache", m->kv_cache, why);
	mem_line(sb, "CUDA context", m->cuda, "context and library workspaces");
	snprintf(why, sizeof(why), "%.0f %% for the allocator and buffers",
	         100 * (train ? FIT_FRAMEWORK_TRAIN : FIT_FRAMEWORK_INFER));
	mem_line(sb, "framework", m->framework, why);
	strbuf_addf(sb, "  %-22s", "total");
	gib(sb, m->total);
	strbuf_addch(sb, '\n');
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
	strbuf_addf(sb, "\n%-34s %5s %10s %10s %11s  %-14s %9s %9s\n", "fits on", "GPUs", "memory",
	            c->local_read ? "free" : "", "margin", "verdict", "max batch", "max ctx");
	for (size_t i = 0; i < c->nr_t; i++) {
		const struct target *t = &c->t[i];
		const char *v = t->fits ? "fits" : t->fits_idle ? "not now (busy)" : "does not fit";

		strbuf_addf(sb, "%-34.34s %5.0f", t->label, t->count);
		gib(sb, t->total);
		strbuf_addstr(sb, " ");
		if (t->local)
			gib(sb, t->free);
		else
			strbuf_addf(sb, "%9s", "");
		strbuf_addf(sb, " %+10.2f  %-14s %9.0f %9.0f\n", t->margin / GIB, v, t->max_batch,
		            t->max_ctx);
	}
	if (c->local_read && c->j.gpus > 1)
		strbuf_addf(sb,
		            "%zu of this machine's GPUs fit the per-GPU need; the job needs %.0f\n",
		            c->local_fitting, c->j.gpus);
	strbuf_addstr(sb, "(GiB per GPU; max batch at this context, max ctx at this batch)\n");
	/* training without checkpointing that does not fit: say what checkpointing would need */
	if (c->j.task != FIT_INFER && !c->j.checkpointing) {
		bool any_short = false;

		for (size_t i = 0; i < c->nr_t; i++)
			any_short |= !c->t[i].fits;
		if (any_short) {
			struct fit_job j = c->j;
			struct fit_mem m;

			j.checkpointing = true;
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
text_rent(struct fit_ctx *c, struct strbuf *sb)
{
	if (!c->rent)
		return;
	strbuf_addstr(sb, "\nto rent, one GPU (smallest first):\n");
	if (!c->nr_rent1)
		strbuf_addstr(sb, "  none of the spec table fits alone\n");
	for (size_t i = 0; i < c->nr_rent1; i++)
		strbuf_addf(sb, "  1 x %-32s %6.0f GB  %+8.2f GiB spare\n", c->rent1[i]->name,
		            c->rent1[i]->mem_gb,
		            (fit_spec_bytes(c->rent1[i]) - c->mem.total) / GIB);
	strbuf_addf(sb, "several GPUs (%s; smallest memory in all first):\n",
	            c->j.task == FIT_INFER         ? "tensor parallel"
	            : c->j.shard != FIT_SHARD_NONE ? fit_shard_name(c->j.shard)
	                                           : "fsdp");
	if (!c->nr_rentn)
		strbuf_addstr(sb, "  none needs 2 to 8 GPUs\n");
	for (size_t i = 0; i < c->nr_rentn; i++)
		strbuf_addf(sb, "  %.0f x %-32s %6.0f GB in all\n", c->rentn_k[i],
		            c->rentn[i]->name, c->rentn_k[i] * c->rentn[i]->mem_gb);
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
		if (isfinite(s->decode))
			strbuf_addf(
			        sb,
			        "  decode    %10.1f tokens/s per sequence, %.1f in all: %.2f GB read per "
			        "step at %.0f %% of %.0f GB/s (bound %.1f)\n",
			        s->decode, s->decode_total, s->bytes_per_step / 1e9,
			        100 * FIT_BW_EFFICIENCY, s->bw_gbs * j->gpus, s->decode_bound);
		if (isfinite(s->prefill))
			strbuf_addf(
			        sb,
			        "  prefill   %10.0f tokens/s: 2N FLOPs per token at %.0f %% MFU of "
			        "%.0f TFLOPS\n",
			        s->prefill, 100 * FIT_MFU, s->peak_tflops * j->gpus);
	} else if (isfinite(s->train)) {
		strbuf_addf(
		        sb,
		        "  training  %10.0f tokens/s: %.0fN FLOPs per token at %.0f %% MFU of %.0f "
		        "TFLOPS\n",
		        s->train, s->flops_per_token / c->s.active, 100 * FIT_MFU,
		        s->peak_tflops * j->gpus);
	}
	if (isfinite(s->time_s))
		strbuf_addf(sb, "  %.3g tokens: %.2f h, %.1f kWh at %.0f W TDP per GPU\n",
		            j->tokens, s->time_s / 3600, s->energy_kwh, s->tdp_w);
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
	fit_jw_num(&jw, "kv_bytes_per_token", c->s.kv_per_token * fit_kv_value_bytes(j->prec), 0);
	fit_jw_num(&jw, "max_ctx", c->s.max_ctx > 0 ? c->s.max_ctx : NAN, 0);
	fit_jw_close(&jw, '}');
	fit_jw_open(&jw, "job", '{');
	fit_jw_str(&jw, "task", fit_task_name(j->task));
	fit_jw_str(&jw, "precision", fit_prec_name(j->prec));
	fit_jw_num(&jw, "ctx", j->ctx, 0);
	fit_jw_num(&jw, "batch", j->batch, 0);
	fit_jw_num(&jw, "gpus", j->gpus, 0);
	fit_jw_str(&jw, "sharding", fit_shard_name(j->shard));
	fit_jw_bool(&jw, "checkpointing", j->checkpointing);
	fit_jw_str(&jw, "optimizer", j->task == FIT_INFER ? NULL : fit_optim_name(j->optim));
	fit_jw_num(&jw, "lora_rank",
	           j->task == FIT_LORA || j->task == FIT_QLORA ? j->lora_rank : NAN, 0);
	fit_jw_num(&jw, "tokens", j->tokens > 0 ? j->tokens : NAN, 0);
	fit_jw_close(&jw, '}');
	fit_jw_open(&jw, "memory", '{');
	fit_jw_num(&jw, "weights_bytes", m->weights, 0);
	fit_jw_num(&jw, "quantization_bytes", m->quant, 0);
	fit_jw_num(&jw, "gathered_bytes", m->gathered, 0);
	fit_jw_num(&jw, "gradients_bytes", m->gradients, 0);
	fit_jw_num(&jw, "optimizer_bytes", m->optimizer, 0);
	fit_jw_num(&jw, "adapters_bytes", m->adapters, 0);
	fit_jw_num(&jw, "activations_bytes", m->activations, 0);
	fit_jw_num(&jw, "kv_cache_bytes", m->kv_cache, 0);
	fit_jw_num(&jw, "cuda_context_bytes", m->cuda, 0);
	fit_jw_num(&jw, "framework_bytes", m->framework, 0);
	fit_jw_num(&jw, "total_bytes", m->total, 0);
	fit_jw_num(&jw, "trainable_params", m->trainable, 0);
	fit_jw_close(&jw, '}');
	fit_jw_open(&jw, "assumptions", '{');
	fit_jw_num(&jw, "bandwidth_efficiency", FIT_BW_EFFICIENCY, 2);
	fit_jw_num(&jw, "mfu", FIT_MFU, 2);
	fit_jw_num(&jw, "framework_share",
	           j->task == FIT_INFER ? FIT_FRAMEWORK_INFER : FIT_FRAMEWORK_TRAIN, 2);
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
		fit_jw_num(&jw, "memory_free_bytes", t->free, 0);
		fit_jw_bool(&jw, "fits", t->fits);
		fit_jw_bool(&jw, "fits_when_free", t->fits_idle);
		fit_jw_num(&jw, "margin_bytes", t->margin, 0);
		fit_jw_num(&jw, "max_batch", t->max_batch, 0);
		fit_jw_num(&jw, "max_ctx", t->max_ctx, 0);
		fit_jw_close(&jw, '}');
	}
	fit_jw_close(&jw, ']');
	if (c->speed_spec) {
		const struct fit_speed *s = &c->sp;

		fit_jw_open(&jw, "speed", '{');
		fit_jw_str(&jw, "gpu", c->speed_spec->name);
		fit_jw_num(&jw, "bandwidth_gbs", s->bw_gbs, 1);
		fit_jw_num(&jw, "peak_tflops", s->peak_tflops, 1);
		fit_jw_num(&jw, "bytes_per_step", s->bytes_per_step, 0);
		fit_jw_num(&jw, "decode_bound_tokens_per_s", s->decode_bound, 2);
		fit_jw_num(&jw, "decode_tokens_per_s", s->decode, 2);
		fit_jw_num(&jw, "decode_total_tokens_per_s", s->decode_total, 2);
		fit_jw_num(&jw, "prefill_tokens_per_s", s->prefill, 1);
		fit_jw_num(&jw, "flops_per_token",
		           s->flops_per_token > 0 ? s->flops_per_token : NAN, 0);
		fit_jw_num(&jw, "train_tokens_per_s", s->train > 0 ? s->train : NAN, 1);
		fit_jw_num(&jw, "time_s", s->time_s, 0);
		fit_jw_num(&jw, "energy_kwh", s->energy_kwh, 2);
		fit_jw_num(&jw, "tdp_w", s->tdp_w, 0);
		fit_jw_str(&jw, "bandwidth_source", c->meas.bw ? "bench" : "spec");
		fit_jw_num(&jw, "bandwidth_spec_gbs", c->meas.bw ? c->meas.spec_bw_gbs : s->bw_gbs,
		           1);
		fit_jw_num(&jw, "bandwidth_measured_time", c->meas.bw ? c->meas.bw_time : NAN, 0);
		fit_jw_str(&jw, "peak_tflops_source", c->meas.flops ? "bench" : "spec");
		fit_jw_str(&jw, "peak_tflops_test", c->meas.flops ? c->meas.flops_test : NULL);
		fit_jw_num(&jw, "peak_tflops_spec",
		           c->meas.flops ? c->meas.spec_tflops : s->peak_tflops, 1);
		fit_jw_num(&jw, "peak_tflops_measured_time",
		           c->meas.flops ? c->meas.flops_time : NAN, 0);
		fit_jw_close(&jw, '}');
	} else {
		fit_jw_null(&jw, "speed");
	}
	if (c->rent) {
		fit_jw_open(&jw, "rent", '{');
		fit_jw_open(&jw, "single", '[');
		for (size_t i = 0; i < c->nr_rent1; i++) {
			fit_jw_open(&jw, NULL, '{');
			fit_jw_str(&jw, "name", c->rent1[i]->name);
			fit_jw_num(&jw, "gpus", 1, 0);
			fit_jw_num(&jw, "memory_bytes", fit_spec_bytes(c->rent1[i]), 0);
			fit_jw_close(&jw, '}');
		}
		fit_jw_close(&jw, ']');
		fit_jw_open(&jw, "multi", '[');
		for (size_t i = 0; i < c->nr_rentn; i++) {
			fit_jw_open(&jw, NULL, '{');
			fit_jw_str(&jw, "name", c->rentn[i]->name);
			fit_jw_num(&jw, "gpus", c->rentn_k[i], 0);
			fit_jw_num(&jw, "memory_bytes", fit_spec_bytes(c->rentn[i]), 0);
			fit_jw_close(&jw, '}');
		}
		fit_jw_close(&jw, ']');
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
		printf("%-32s %s\n", m[i].name, m[i].family);
	return EXIT_OK;
}

static int
usage_error(const char *msg)
{
	cmd_error("%s", msg);
	return EXIT_USAGE;
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
		OPT_OPTIM,
		OPT_RANK,
		OPT_TOKENS,
		OPT_RENT,
		OPT_LIST
	};
	static const struct option opts[] = {
		{ "task", required_argument, NULL, OPT_TASK },
		{ "precision", required_argument, NULL, OPT_PREC },
		{ "ctx", required_argument, NULL, OPT_CTX },
		{ "batch", required_argument, NULL, OPT_BATCH },
		{ "gpus", required_argument, NULL, OPT_GPUS },
		{ "gpu", required_argument, NULL, OPT_GPU },
		{ "zero", required_argument, NULL, OPT_ZERO },
		{ "fsdp", no_argument, NULL, OPT_FSDP },
		{ "checkpointing", no_argument, NULL, OPT_CKPT },
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
	struct strbuf out = STRBUF_INIT;
	const char *gpu_names = NULL;
	bool json = false, prec_set = false, rank_set = false, optim_set = false, zero = false,
	     fsdp = false, verdict, fit = false;
	int opt, rc = EXIT_OK, v;
	double d;

	fit_job_init(&c->j);
	c->t = xcalloc(MAX_TARGETS, sizeof(*c->t));
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
			if ((v = fit_prec_parse(optarg)) < 0) {
				cmd_error("--precision '%s': fp32, bf16, fp16, fp8, int8 or int4",
				          optarg);
				rc = EXIT_USAGE;
				goto out;
			}
			c->j.prec = v;
			prec_set = true;
			break;
		case OPT_CTX:
		case OPT_BATCH:
		case OPT_GPUS:
		case OPT_RANK:
			if (parse_count(optarg, opt == OPT_CTX ? 1024 : 1000, &d) < 0 || d <= 0 ||
			    d != floor(d)) {
				cmd_error("--%s '%s': a whole number above 0",
				          opt == OPT_CTX     ? "ctx"
				          : opt == OPT_BATCH ? "batch"
				          : opt == OPT_GPUS  ? "gpus"
				                             : "lora-rank",
				          optarg);
				rc = EXIT_USAGE;
				goto out;
			}
			if (opt == OPT_CTX)
				c->j.ctx = d;
			else if (opt == OPT_BATCH)
				c->j.batch = d;
			else if (opt == OPT_GPUS)
				c->j.gpus = d;
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
			c->j.checkpointing = true;
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
	if (rank_set && c->j.task != FIT_LORA && c->j.task != FIT_QLORA) {
		rc = usage_error("--lora-rank goes with --task lora or qlora");
		goto out;
	}
	if (optim_set && c->j.task == FIT_INFER) {
		rc = usage_error(
		        "--optimizer is for training (--task full, freeze, lora or qlora)");
		goto out;
	}
	if (gpu_names && c->rent) {
		rc = usage_error("--gpu judges named GPUs, --rent finds some: one or the other");
		goto out;
	}
	if (c->j.task == FIT_QLORA && !prec_set)
		c->j.prec = FIT_INT4;
	if (fit_job_check(&c->j, &err) < 0) {
		rc = usage_error(err.msg);
		goto out;
	}
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
	fit_memory(&c->s, &c->j, &c->mem);

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
	if (c->rent)
		rent(c);
	if (c->speed_spec)
		fit_speed(&c->s, &c->j, c->speed_spec, &c->sp);

	/* the verdict: named GPUs, any fits; this machine, enough GPUs fit; --rent, something */
	verdict = c->nr_t > 0 || c->rent;
	if (c->local_read && c->nr_t)
		fit = (double)c->local_fitting >= c->j.gpus;
	else if (c->nr_t)
		for (size_t i = 0; i < c->nr_t; i++)
			fit = fit || c->t[i].fits;
	else if (c->rent)
		fit = c->nr_rent1 + c->nr_rentn > 0;
	if (json) {
		json_doc(c, &out, verdict, fit);
	} else {
		text_memory(c, &out);
		text_targets(c, &out);
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
	strbuf_release(&out);
	free(c->t);
	free(c);
	return rc;
}
