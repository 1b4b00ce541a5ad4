/*
 * Serving engines: the profile table (data/engines/engines.tsv, built in by
 * engines_data.S, parsed once on first use), decode and prefill speed per
 * engine with tensor parallelism and MoE, and vLLM's KV-cache allocation.
 * The model is stated in engine.h; every constant here names its source.
 */
#include "fit/engine.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/err.h"
#include "core/specs.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "fit/fit.h"
#include "fit/models.h"

extern const char engines_tsv[], engines_tsv_end[];

#define ENGINES_FILE "data/engines/engines.tsv"
#define GIB          1073741824.0

/*
 * All-reduce latency of one small message. NVLink: 6 us for 2 H100s with
 * NVLS (NVIDIA/nccl#1259, NCCL 2.20.5, CUDA graphs), and the 64 all-reduces
 * of Llama-3-8B's TP-8 decode step cost about 9 us each in SGLang
 * (sgl-project/sglang#1008: 3.35 ms at TP 8 against 7.37 ms at TP 1, less
 * 1/8 of the weight reading); 8 us. PCIe: 12-13 us for 32 KiB over a 2080 Ti
 * NVLink bridge (NVIDIA/nccl-tests#44) is the floor of a consumer link;
 * through PCIe switches or host memory twice that is assumed: 25 us.
 */
#define LAT_NVLINK_US 8.0
#define LAT_PCIE_US   25.0
/*
 * Achieved ring all-reduce bus bandwidth over the per-direction link rate:
 * A100 SXM 208 GB/s of 300 (NVIDIA/nccl-tests#178, 2 GPUs NV12), 8 x H100
 * 476 GB/s of 450 with NVLink SHARP (NVIDIA/nccl-tests#290); 0.8, and the
 * same share of a PCIe link assumed (4.0 x16: 25 of 31.5 GB/s; no PCIe
 * measurement in hand).
 */
#define LINK_ACHIEVED 0.8
/* Per-direction PCIe x16 rates, GB/s (PCI-SIG: 8, 16, 32 GT/s with 128b/130b). */
static const double pcie_x16_gbs[] = { 0, 4.0, 8.0, 15.75, 31.5, 63.0, 126.0 };
/* NVLink 5 (B200, GB200): 1.8 TB/s per GPU, both directions (NVIDIA Blackwell datasheet). */
#define NVLINK5_GBS 1800.0

/*
 * vLLM's memory profile (vllm-project/vllm#10511, v0.6.5, 2024-12-13,
 * Llama-3-8B on H100 80GB: total_gpu_memory 79.22 GiB, activation peak
 * 1.26 GiB at TP 1 and TP 2, non_torch 1.79 GiB at TP 1 and 3.58 GiB at
 * TP 2; vllm-project/vllm#10517, v0.6.4, 2024-12-02, Llama-3.1-8B-Instruct
 * on an RTX 3090: total 23.58 GiB, non_torch 0.35 GiB; vllm-project/vllm
 * #21489, 2025-07-24, gemma-3-4b-it on a 178.36 GiB GPU, `vllm bench
 * latency`: peak activation 9.96 GiB, non-torch 0.07 GiB):
 * - total_gpu_memory is CUDA's total: gpu_spec_cuda_total_bytes() (core/specs.h);
 * - the profile run's activation peak is the larger of the forward pass and
 *   the sampler run after it (the forward's tensors are freed by then):
 *   the forward's MLP chain over the batched tokens, gate/up output (2 x
 *   mlp_width), the activation (mlp_width) and three hidden-wide tensors,
 *   16-bit: 6 (mlp_width + hidden) bytes a token (#10517: peak_torch less the
 *   weights' 14.99 GiB, 2.07 GiB at 20000 and 2.99 GiB at 29000 tokens,
 *   against 2.06 and 2.99); the sampler's logits of max_num_seqs sequences
 *   over the vocabulary with their fp32 copies, probabilities and sort
 *   buffers, 40 bytes a logit (#10511: 256 x 128256 x 40 = 1.22 GiB against
 *   1.26, equal at TP 1 and 2 as the sampler is not split; #21489: 1024 x
 *   262208 x 40 = 9.99 GiB against 9.96);
 * - non-torch memory: 0.35 GiB (#10517; 0.20 in vllm#14447 v0.8, 0.07 in
 *   #21489, 1.79 in #10511), and 1.79 GiB more for NCCL's buffers once TP > 1
 *   (#10511: 3.58 at TP 2).
 */
#define ACT_BYTES_PER_UNIT      6.0
#define SAMPLER_BYTES_PER_LOGIT 40.0
#define NONTORCH_BYTES          (0.35 * GIB)
#define NONTORCH_TP             (1.79 * GIB)
/*
 * vLLM's defaults for `vllm serve` (vllm/engine/arg_utils.py,
 * EngineArgs.get_batch_defaults, commit 99d7eb5d6a51): GPUs with 70 GiB or
 * more other than the A100 get max_num_batched_tokens 8192 and max_num_seqs
 * 1024, the rest 2048 and 256; gpu_memory_utilization 0.9, block_size 16.
 */
#define VLLM_BIG_GPU (70 * GIB)

static struct engine_profile *table;
static size_t table_nr;
static struct err table_err;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;
static const char *common_names[16];
static size_t common_nr;
static char names_buf[256];

/* ---- the table ---- */

enum col {
	C_NAME,
	C_ALIASES,
	C_ARCH,
	C_COMMON,
	C_BW,
	C_STEP,
	C_LAYER,
	C_MOE,
	C_MULTI,
	C_MFU_D,
	C_MFU_P,
	C_MFU_PQ,
	C_ATTN,
	C_VERSION,
	C_SOURCE,
	C_NR
};
static const char *const col_names[C_NR] = { "name",       "aliases",       "arch",
	                                     "common",     "bw_eff",        "step_us",
	                                     "layer_us",   "moe_expert_us", "multi_gpu",
	                                     "mfu_decode", "mfu_prefill",   "mfu_prefill_q",
	                                     "attn_cost",  "version",       "source" };

static void
row_free(struct engine_profile *r)
{
	free((char *)(uintptr_t)r->name);
	free((char *)(uintptr_t)r->aliases);
	free((char *)(uintptr_t)r->arch);
	free((char *)(uintptr_t)r->version);
	free((char *)(uintptr_t)r->source);
}

void
engine_free(struct engine_profile *rows, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		row_free(&rows[i]);
	free(rows);
}

/* A cell as a number in [lo, hi]; false when it is not one. */
static bool
cell_num(const char *cell, size_t len, double lo, double hi, double *out)
{
	char buf[64], *end;

	if (!len || len >= sizeof(buf))
		return false;
	memcpy(buf, cell, len);
	buf[len] = '\0';
	*out = strtod(buf, &end);
	return end != buf && !*end && isfinite(*out) && *out >= lo && *out <= hi;
}

/* Whether name is the canonical name or one of the '|'-separated aliases of r. */
static bool
row_names(const struct engine_profile *r, const char *name)
{
	const char *a = r->aliases;
	size_t n = strlen(name);

	if (!strcasecmp(r->name, name))
		return true;
	while (*a) {
		const char *bar = strchr(a, '|');
		size_t len = bar ? (size_t)(bar - a) : strlen(a);

		if (len == n && !strncasecmp(a, name, n))
			return true;
		a += len + (bar != NULL);
	}
	return false;
}

/* The checks over the whole table: one "any" row per engine, no name twice. */
static int
table_check(const struct engine_profile *rows, size_t nr, const char *file, struct err *err)
{
	for (size_t i = 0; i < nr; i++) {
		size_t any = 0;

		for (size_t k = 0; k < nr; k++) {
			if (strcmp(rows[k].name, rows[i].name)) {
				if (row_names(&rows[k], rows[i].name))
					return err_set(err, E_PARSE,
					               "%s: engine %s is also an alias of %s", file,
					               rows[i].name, rows[k].name);
				continue;
			}
			if (k > i && !strcasecmp(rows[k].arch, rows[i].arch))
				return err_set(err, E_PARSE, "%s: engine %s has two rows for %s",
				               file, rows[i].name, rows[i].arch);
			any += !strcmp(rows[k].arch, "any");
		}
		if (any != 1)
			return err_set(err, E_PARSE,
			               "%s: engine %s needs exactly one \"any\" row, has %zu", file,
			               rows[i].name, any);
	}
	return nr ? 0 : err_set(err, E_PARSE, "%s: no engines", file);
}

/* Fill r from the cells of one line; 0 or E_PARSE naming file:line and the column. */
static int
row_parse(struct engine_profile *r, const char *const *cell, const size_t *len, const int *map,
          const char *file, int line, struct err *err)
{
	static const struct {
		enum col c;
		double lo, hi;
		size_t off;
	} nums[] = {
		{ C_BW, 0.01, 1, offsetof(struct engine_profile, bw_eff) },
		{ C_STEP, 0, 1e6, offsetof(struct engine_profile, step_us) },
		{ C_LAYER, 0, 1e5, offsetof(struct engine_profile, layer_us) },
		{ C_MOE, 0, 1e5, offsetof(struct engine_profile, moe_expert_us) },
		{ C_MFU_D, 0.01, 1, offsetof(struct engine_profile, mfu_decode) },
		{ C_MFU_P, 0.01, 1, offsetof(struct engine_profile, mfu_prefill) },
		{ C_MFU_PQ, 0.01, 1, offsetof(struct engine_profile, mfu_prefill_q) },
		{ C_ATTN, 1, 100, offsetof(struct engine_profile, attn_cost) },
	};
	const char *c;
	size_t l;

	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		c = cell[map[nums[i].c]];
		l = len[map[nums[i].c]];
		if (!cell_num(c, l, nums[i].lo, nums[i].hi,
		              (double *)(void *)((char *)r + nums[i].off)))
			return err_set(err, E_PARSE,
			               "%s:%d: %s \"%.*s\" is not a number in [%g, %g]", file, line,
			               col_names[nums[i].c], (int)(l > 40 ? 40 : l), c, nums[i].lo,
			               nums[i].hi);
	}
	c = cell[map[C_COMMON]];
	l = len[map[C_COMMON]];
	if ((l == 3 && !strncmp(c, "yes", 3)) || (l == 2 && !strncmp(c, "no", 2)))
		r->common = l == 3;
	else
		return err_set(err, E_PARSE, "%s:%d: common \"%.*s\" is neither yes nor no", file,
		               line, (int)(l > 40 ? 40 : l), c);
	c = cell[map[C_MULTI]];
	l = len[map[C_MULTI]];
	if ((l == 6 && !strncmp(c, "tensor", 6)) || (l == 5 && !strncmp(c, "layer", 5)))
		r->layer_split = l == 5;
	else
		return err_set(err, E_PARSE,
		               "%s:%d: multi_gpu \"%.*s\" is neither tensor nor layer", file, line,
		               (int)(l > 40 ? 40 : l), c);
	for (enum col k = C_NAME; k <= C_ARCH; k++)
		if (!len[map[k]] || memchr(cell[map[k]], ' ', len[map[k]]))
			return err_set(err, E_PARSE, "%s:%d: %s is empty or has a space", file,
			               line, col_names[k]);
	r->name = xstrndup(cell[map[C_NAME]], len[map[C_NAME]]);
	l = len[map[C_ALIASES]];
	r->aliases = xstrndup(cell[map[C_ALIASES]], l == 1 && *cell[map[C_ALIASES]] == '-' ? 0 : l);
	r->arch = xstrndup(cell[map[C_ARCH]], len[map[C_ARCH]]);
	r->version = xstrndup(cell[map[C_VERSION]], len[map[C_VERSION]]);
	r->source = xstrndup(cell[map[C_SOURCE]], len[map[C_SOURCE]]);
	return 0;
}

#define MAX_CELLS 16

int
engine_parse(const char *text, size_t size, const char *file, struct engine_profile **rows_out,
             size_t *nr_out, struct err *err)
{
	const char *p = text, *end = text + size;
	struct engine_profile *rows = NULL;
	size_t nr = 0, alloc = 0, ncols = 0;
	int map[C_NR], line = 0, ret = 0;
	bool header = false;

	*rows_out = NULL;
	*nr_out = 0;
	while (p < end && !ret) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *cell[MAX_CELLS], *q;
		size_t len[MAX_CELLS], n = 0;

		if (!eol)
			eol = end;
		line++;
		if (*p == '#' || eol == p || (eol - p == 1 && *p == '\r')) {
			p = eol + 1;
			continue;
		}
		for (q = p; n < MAX_CELLS;) {
			const char *tab = memchr(q, '\t', (size_t)(eol - q)),
			           *stop = tab ? tab : eol;

			cell[n] = q;
			len[n] = (size_t)(stop - q);
			if (!tab && len[n] && q[len[n] - 1] == '\r')
				len[n]--;
			n++;
			if (!tab)
				break;
			q = tab + 1;
		}
		if (n == MAX_CELLS && memchr(q, '\t', (size_t)(eol - q)))
			ret = err_set(err, E_PARSE, "%s:%d: more than %d columns", file, line,
			              MAX_CELLS);
		else if (!header) {
			for (int k = 0; k < C_NR; k++) {
				map[k] = -1;
				for (size_t i = 0; i < n; i++)
					if (len[i] == strlen(col_names[k]) &&
					    !memcmp(cell[i], col_names[k], len[i]))
						map[k] = (int)i;
				if (map[k] < 0 && !ret)
					ret = err_set(err, E_PARSE,
					              "%s:%d: no column \"%s\" in the header", file,
					              line, col_names[k]);
			}
			ncols = n;
			header = true;
		} else if (n != ncols)
			ret = err_set(err, E_PARSE, "%s:%d: %zu cells, the header has %zu", file,
			              line, n, ncols);
		else {
			ALLOC_GROW(rows, nr + 1, alloc);
			memset(&rows[nr], 0, sizeof(rows[nr]));
			ret = row_parse(&rows[nr], cell, len, map, file, line, err);
			if (!ret)
				nr++;
		}
		p = eol + 1;
	}
	if (!ret && !header)
		ret = err_set(err, E_PARSE, "%s: no header line", file);
	if (!ret)
		ret = table_check(rows, nr, file, err);
	if (ret) {
		engine_free(rows, nr);
		return ret;
	}
	*rows_out = rows;
	*nr_out = nr;
	return 0;
}

static void
load_table(void)
{
	struct strbuf sb = STRBUF_INIT;

	if (engine_parse(engines_tsv, (size_t)(engines_tsv_end - engines_tsv), ENGINES_FILE, &table,
	                 &table_nr, &table_err))
		return;
	for (size_t i = 0; i < table_nr; i++) {
		bool seen = false;

		for (size_t k = 0; k < i; k++)
			seen |= !strcmp(table[k].name, table[i].name);
		if (seen)
			continue;
		if (sb.len)
			strbuf_addstr(&sb, ", ");
		strbuf_addstr(&sb, table[i].name);
		if (table[i].common && common_nr < sizeof(common_names) / sizeof(common_names[0]))
			common_names[common_nr++] = table[i].name;
	}
	snprintf(names_buf, sizeof(names_buf), "%s", sb.buf ? sb.buf : "");
	strbuf_release(&sb);
}

size_t
engine_profiles(const struct engine_profile **out)
{
	pthread_once(&table_once, load_table);
	*out = table;
	return table_nr;
}

int
engine_table_check(struct err *err)
{
	pthread_once(&table_once, load_table);
	return table_err.code ? err_set(err, table_err.code, "%s", table_err.msg) : 0;
}

const char *
engine_canonical(const char *name)
{
	const struct engine_profile *rows;
	size_t nr = engine_profiles(&rows);

	for (size_t i = 0; name && i < nr; i++)
		if (row_names(&rows[i], name))
			return rows[i].name;
	return NULL;
}

const char *
engine_names(void)
{
	pthread_once(&table_once, load_table);
	return names_buf;
}

const struct engine_profile *
engine_find(const char *name, const char *arch)
{
	const struct engine_profile *rows, *any = NULL;
	const char *canon = engine_canonical(name);
	size_t nr = engine_profiles(&rows);

	for (size_t i = 0; canon && i < nr; i++) {
		if (strcmp(rows[i].name, canon))
			continue;
		if (arch && !strcasecmp(rows[i].arch, arch))
			return &rows[i];
		if (!strcmp(rows[i].arch, "any"))
			any = &rows[i];
	}
	return any;
}

const struct engine_profile *
engine_find_gpu(const char *name, const struct gpu_spec *g)
{
	char both[96];
	const struct engine_profile *e;

	if (g && g->arch && g->kind) {
		snprintf(both, sizeof(both), "%s/%s", g->arch, g->kind);
		e = engine_find(name, both);
		if (e && !strcasecmp(e->arch, both))
			return e;
	}
	return engine_find(name, g ? g->arch : NULL);
}

size_t
engine_common(const char *const **names)
{
	pthread_once(&table_once, load_table);
	*names = common_names;
	return common_nr;
}

/* ---- options, links ---- */

void
engine_opts_init(struct engine_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->link_gbs = o->link_lat_us = o->bw_gbs = o->peak_tflops = NAN;
	o->routed_params = NAN;
	o->gpu_memory_utilization = 0.9;
	o->block_size = 16;
	o->max_num_seqs = o->max_num_batched_tokens = NAN;
}

static double
nz(double v, double dflt)
{
	return isfinite(v) && v > 0 ? v : dflt;
}

void
engine_opts_from_model(struct engine_opts *o, const struct model_cfg *m)
{
	o->kv_heads = nz(m->kv_heads, nz(m->heads, 0));
	o->mla = m->kv_lora_rank > 0;
	o->experts = o->experts_per_token = o->shared_experts = o->dense_layers = 0;
	o->routed_params = NAN;
	if (!(m->experts > 0))
		return;
	o->experts = m->experts;
	o->experts_per_token = nz(m->experts_per_token, 1);
	o->shared_experts = nz(m->shared_experts, 0);
	o->dense_layers = nz(m->first_dense_layers, 0);
	/* gated MLP experts: gate, up and down projections of hidden x expert width */
	o->routed_params = (m->layers - nz(m->first_dense_layers, 0)) * m->experts * 3 * m->hidden *
	                   nz(m->moe_intermediate, m->intermediate);
	if (!(o->routed_params > 0))
		o->routed_params = NAN;
}

/* The NVLink figure of g's notes ("NVLink 900 GB/s", both directions); 0 none. */
static double
notes_nvlink(const struct gpu_spec *g)
{
	const char *p = g->notes;

	while (p && (p = strstr(p, "NVLink ")) != NULL) {
		char *end;
		double v = strtod(p + 7, &end);

		if (end != p + 7 && !strncmp(end, " GB/s", 5))
			return v;
		p += 7;
	}
	return 0;
}

static bool
has_nvlink(const struct gpu_spec *g)
{
	if (g->name && strstr(g->name, "PCIe"))
		return false;
	return notes_nvlink(g) > 0 || (g->arch && !strcmp(g->arch, "Blackwell") && g->kind &&
	                               !strcmp(g->kind, "datacenter"));
}

double
engine_link_default_gbs(const struct gpu_spec *g, double n)
{
	double nv = notes_nvlink(g);
	int gen = g->pcie_gen > 0 && g->pcie_gen <= 6 ? g->pcie_gen : 4;
	int width = g->pcie_width > 0 ? g->pcie_width : 16;

	if (n <= 1)
		return 0;
	if (has_nvlink(g))
		return LINK_ACHIEVED * (nv > 0 ? nv : NVLINK5_GBS) / 2;
	return LINK_ACHIEVED * pcie_x16_gbs[gen] * width / 16;
}

double
engine_link_default_lat_us(const struct gpu_spec *g, double n)
{
	if (n <= 1)
		return 0;
	return has_nvlink(g) ? LAT_NVLINK_US : LAT_PCIE_US;
}

double
engine_allreduce_s(double bytes, double n, double link_gbs, double lat_us)
{
	if (n <= 1 || !(bytes > 0))
		return 0;
	if (!(link_gbs > 0))
		return INFINITY;
	return lat_us * 1e-6 + 2 * (n - 1) / n * bytes / (link_gbs * 1e9);
}

double
engine_moe_read_share(double experts, double k, double b)
{
	if (!(experts > 0) || !(k > 0))
		return 1;
	if (k >= experts)
		return 1;
	return 1 - pow(1 - k / experts, b > 1 ? b : 1);
}

/* ---- what a step reads ---- */

/*
 * Bytes of the weights one token's decode step reads:
 * fit_job_active_weight_bytes() counts the decoder layers at the job's
 * format (MoE: the experts routed to), the norms and the LM head, and of an
 * untied embedding matrix nothing (a step reads one row of it).
 */
static double
token_weight_bytes(const struct fit_shape *s, const struct fit_job *j)
{
	return fmax(0, fit_job_active_weight_bytes(s, j));
}

double
engine_step_weight_bytes(const struct fit_shape *s, const struct fit_job *j,
                         const struct engine_opts *o, double b)
{
	double w = token_weight_bytes(s, j), E = o ? o->experts : 0,
	       k = o ? o->experts_per_token : 0;
	double routed, extra, per_param;

	if (!(E > 0) || !(k > 0) || k >= E || !(b > 1))
		return w;
	/* routed experts: from the option, else what the shape's total and active imply */
	routed = o && isfinite(o->routed_params) && o->routed_params > 0
	                 ? o->routed_params
	                 : (s->params - s->active) / (1 - k / E);
	if (!(routed > 0))
		return w;
	per_param = s->params > 0 ? fit_job_weight_bytes(s, j) / s->params : 2;
	extra = routed * (engine_moe_read_share(E, k, b) - k / E);
	return w + (extra > 0 ? extra : 0) * per_param;
}

/* ---- speed ---- */

static double
bw_of(const struct gpu_spec *g, const struct engine_opts *o)
{
	return o && isfinite(o->bw_gbs) && o->bw_gbs > 0 ? o->bw_gbs : g->mem_bw_gbs;
}

/*
 * The peak the profiles' mfu figures are shares of: FP8 jobs the FP8 rate
 * (TensorRT-LLM's FP8 first-token latencies), FP32 the FP32 rate, every
 * other job the dense 16-bit rate: weight-only int8 / int4 formats (GGUF,
 * AWQ, GPTQ, bitsandbytes) dequantise to 16 bits or run llama.cpp's MMQ
 * kernels, whose measured prefill is a share of the 16-bit figure
 * (README.md), not of the int8 TOPS.
 */
static double
peak_of(const struct gpu_spec *g, const struct fit_job *j, const struct engine_opts *o)
{
	double half = isfinite(g->bf16) && g->bf16 > 0 ? g->bf16 : g->fp16;

	if (o && isfinite(o->peak_tflops) && o->peak_tflops > 0)
		return o->peak_tflops;
	if (j->prec == FIT_FP32)
		return g->fp32;
	if (j->prec == FIT_FP8 && isfinite(g->fp8) && g->fp8 > 0)
		return g->fp8;
	return half;
}

static void
link_of(const struct gpu_spec *g, const struct engine_opts *o, double n, double *gbs, double *lat)
{
	*gbs = o && isfinite(o->link_gbs) && o->link_gbs > 0 ? o->link_gbs
	                                                     : engine_link_default_gbs(g, n);
	*lat = o && isfinite(o->link_lat_us) && o->link_lat_us >= 0
	               ? o->link_lat_us
	               : engine_link_default_lat_us(g, n);
}

void
engine_speed(const struct engine_profile *e, const struct fit_shape *s, const struct fit_job *j,
             const struct gpu_spec *g, const struct engine_opts *o, struct engine_speed *out)
{
	double n = j->gpus >= 1 ? j->gpus : 1, b = j->batch >= 1 ? j->batch : 1;
	double bw, peak, gbs, lat, t, hi, lo, flops, chunk, per_token, moe_layers, mfu;

	memset(out, 0, sizeof(*out));
	out->decode = out->decode_total = out->decode_bound = out->prefill = NAN;
	if (!e)
		return;
	if (e->layer_split)
		n = 1; /* one GPU at a time reads its layers: as fast as one GPU */
	out->engine = e->name;
	out->arch = e->arch;
	out->bw_gbs = bw = bw_of(g, o);
	out->peak_tflops = peak = peak_of(g, j, o);
	if (!(bw > 0) || !(s->active > 0))
		return;
	link_of(g, o, n, &gbs, &lat);

	out->weight_bytes = engine_step_weight_bytes(s, j, o, b);
	out->kv_bytes = fit_kv_bytes(s, j->ctx, b, fit_job_kv_value_bytes(j));
	moe_layers = o && o->experts > 0 && o->experts_per_token > 0
	                     ? fmax(0, s->layers - o->dense_layers)
	                     : 0;
	/* each routed expert a token goes to costs its own small kernels' time (engine.h) */
	out->t_fixed = (e->step_us + s->layers * e->layer_us +
	                moe_layers * o->experts_per_token * e->moe_expert_us) *
	               1e-6;
	out->t_mem = (out->weight_bytes + out->kv_bytes) / n / (e->bw_eff * bw * 1e9);
	out->t_flops = isfinite(peak) && peak > 0
	                       ? 2 * s->active * b / n / (e->mfu_decode * peak * 1e12)
	                       : 0;
	out->t_comm = 2 * s->layers * engine_allreduce_s(b * s->hidden * 2, n, gbs, lat);
	/* reading and computing overlap when one dominates, not when they are even (engine.h) */
	hi = fmax(out->t_mem, out->t_flops);
	lo = fmin(out->t_mem, out->t_flops);
	t = out->t_fixed + (hi > 0 ? hi + lo * lo / hi : 0) + out->t_comm;
	out->decode = 1 / t;
	out->decode_total = b / t;
	out->decode_bound = n * bw * 1e9 / (out->weight_bytes + out->kv_bytes);

	/* prefill: the weights' 2N and causal attention's 2 L h ctx per token, in chunks */
	if (!(isfinite(peak) && peak > 0))
		return;
	flops = 2 * s->active +
	        e->attn_cost * 2 * s->layers * s->hidden * (j->ctx > 0 ? j->ctx : 0);
	chunk = j->ctx > 0 && j->ctx < FIT_PREFILL_CHUNK ? j->ctx : FIT_PREFILL_CHUNK;
	/* weight-only int8 / int4 formats run their own GEMMs (llama.cpp MMQ, AWQ / GPTQ kernels)
	 */
	mfu = j->prec == FIT_INT8 || j->prec == FIT_INT4 ? e->mfu_prefill_q : e->mfu_prefill;
	per_token = flops / (n * mfu * peak * 1e12) +
	            2 * s->layers * engine_allreduce_s(chunk * s->hidden * 2, n, gbs, lat) / chunk;
	out->prefill = 1 / per_token;
}

void
engine_speed_range(const struct fit_shape *s, const struct fit_job *j, const struct gpu_spec *g,
                   const struct engine_opts *o, struct engine_range *r)
{
	const char *const *names;
	size_t nr = engine_common(&names);

	memset(r, 0, sizeof(*r));
	r->decode_low = r->decode_total_low = r->prefill_low = INFINITY;
	r->decode_high = r->decode_total_high = r->prefill_high = -INFINITY;
	for (size_t i = 0; i < nr; i++) {
		struct engine_speed es;

		engine_speed(engine_find_gpu(names[i], g), s, j, g, o, &es);
		if (isfinite(es.decode)) {
			if (es.decode < r->decode_low) {
				r->decode_low = es.decode;
				r->decode_low_engine = names[i];
			}
			if (es.decode > r->decode_high) {
				r->decode_high = es.decode;
				r->decode_high_engine = names[i];
			}
			r->decode_total_low = fmin(r->decode_total_low, es.decode_total);
			r->decode_total_high = fmax(r->decode_total_high, es.decode_total);
		}
		if (isfinite(es.prefill)) {
			if (es.prefill < r->prefill_low) {
				r->prefill_low = es.prefill;
				r->prefill_low_engine = names[i];
			}
			if (es.prefill > r->prefill_high) {
				r->prefill_high = es.prefill;
				r->prefill_high_engine = names[i];
			}
		}
	}
	if (!r->decode_low_engine)
		r->decode_low = r->decode_high = r->decode_total_low = r->decode_total_high = NAN;
	if (!r->prefill_low_engine)
		r->prefill_low = r->prefill_high = NAN;
	r->decode_mid = sqrt(r->decode_low * r->decode_high);
	r->decode_total_mid = sqrt(r->decode_total_low * r->decode_total_high);
	r->prefill_mid = sqrt(r->prefill_low * r->prefill_high);
}

/* ---- serving capacity ---- */

static bool
vllm_big_gpu(const struct gpu_spec *g)
{
	return fit_spec_bytes(g) /* cudaMemGetInfo's total */ >= VLLM_BIG_GPU &&
	       !(g->name && strstr(g->name, "A100"));
}

void
engine_serving(const struct engine_profile *e, const struct fit_shape *s, const struct fit_job *j,
               const struct gpu_spec *g, const struct engine_opts *o, struct engine_serving *out)
{
	struct engine_opts dflt;
	double n = j->gpus >= 1 ? j->gpus : 1, kvb, split, tokens_batch, max_seqs, block, per_seq;
	double seq_blocks, ctx = j->ctx >= 1 ? j->ctx : 1;

	memset(out, 0, sizeof(*out));
	out->per_seq_tokens_per_s = out->aggregate_tokens_per_s = NAN;
	if (!o) {
		engine_opts_init(&dflt);
		o = &dflt;
	}
	if (!e)
		e = engine_find_gpu("vllm", g);
	tokens_batch = nz(o->max_num_batched_tokens, vllm_big_gpu(g) ? 8192 : 2048);
	max_seqs = nz(o->max_num_seqs, vllm_big_gpu(g) ? 1024 : 256);
	block = nz(o->block_size, 16);

	out->total_bytes = fit_spec_bytes(g);
	out->budget_bytes = nz(o->gpu_memory_utilization, 0.9) * out->total_bytes;
	out->weight_bytes = fit_job_weight_bytes(s, j) / n;
	out->activation_bytes = fmax(ACT_BYTES_PER_UNIT * tokens_batch * (s->mlp_width + s->hidden),
	                             SAMPLER_BYTES_PER_LOGIT * max_seqs * s->vocab);
	out->non_torch_bytes = NONTORCH_BYTES + (n > 1 ? NONTORCH_TP : 0);
	if (e && !strcmp(e->name, "sglang")) {
		/*
		 * SGLang sizes its pool from what is free after loading, less the share of the
		 * total it keeps for activations and CUDA graphs: rest = free - total x (1 -
		 * mem_fraction_static) (sgl-project/sglang v0.5.8 model_runner_kv_cache_mixin.py
		 * profile_max_num_token), i.e. fraction x total - weights - the CUDA context;
		 * gpu_memory_utilization stands for mem_fraction_static. Pages of one token.
		 */
		out->activation_bytes = 0;
		out->non_torch_bytes = gpu_spec_context_bytes(g);
		if (!(out->non_torch_bytes >= 0))
			out->non_torch_bytes = NONTORCH_BYTES;
		block = 1;
	}
	out->kv_pool_bytes = out->budget_bytes - out->weight_bytes - out->activation_bytes -
	                     out->non_torch_bytes;

	/* a GPU holds kv_heads / n of the heads, at least one; MLA's latent on every GPU */
	split = o->mla ? 1 : (o->kv_heads > 0 && o->kv_heads < n ? o->kv_heads : n);
	kvb = fit_job_kv_value_bytes(j);
	out->block_bytes = block * s->kv_per_token * kvb / split;
	if (!(out->kv_pool_bytes > 0) || !(out->block_bytes > 0))
		return;
	out->blocks = floor(out->kv_pool_bytes / out->block_bytes);
	out->kv_cache_tokens = out->blocks * block;
	out->concurrency = out->kv_cache_tokens / ctx;
	/* SGLang's max_running_requests when unset: tokens / context x 512 within [2048, 4096] */
	if (e && !strcmp(e->name, "sglang") && !(o->max_num_seqs > 0))
		max_seqs = fmin(4096, fmax(2048, out->concurrency * 512));
	/* a sequence takes whole blocks; sliding-window layers hold at most their window */
	per_seq = fit_kv_bytes(s, ctx, 1, kvb) / split;
	seq_blocks = ceil(per_seq / out->block_bytes - 1e-9);
	out->max_concurrent_seqs = seq_blocks > 0 ? floor(out->blocks / seq_blocks) : 0;
	if (out->max_concurrent_seqs > max_seqs)
		out->max_concurrent_seqs = max_seqs;
	out->fits = out->max_concurrent_seqs >= 1;
	if (out->fits && e) {
		struct fit_job jb = *j;
		struct engine_speed es;

		jb.batch = out->max_concurrent_seqs;
		engine_speed(e, s, &jb, g, o, &es);
		out->per_seq_tokens_per_s = es.decode;
		out->aggregate_tokens_per_s = es.decode_total;
	}
}
