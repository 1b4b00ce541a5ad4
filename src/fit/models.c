/*
 * Transformer model shapes: the catalog (data/models/models.tsv, built in by
 * models_data.S, parsed once on first use), Hugging Face config.json files
 * (parsed by jansson, core/jsonin.h), generic shapes for a bare size ("7b",
 * "8x7b"), and the parameter and KV-cache arithmetic on a shape.
 */
#include "fit/models.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "core/err.h"
#include "core/fileio.h"
#include "core/jsonin.h"
#include "core/strbuf.h"
#include "core/strdist.h"
#include "core/xalloc.h"

extern const char models_tsv[], models_tsv_end[];

static struct model_cfg *catalog;
static size_t catalog_nr;
static pthread_once_t catalog_once = PTHREAD_ONCE_INIT;

#define CONFIG_MAX (1024 * 1024) /* config.json files are a few KiB; refuse more than 1 MiB */

/* ---- the catalog ---- */

enum col_kind { COL_NUM, COL_BILLIONS, COL_BOOL, COL_NAME, COL_FAMILY, COL_ALIASES, COL_SOURCE };

static const struct column {
	const char *name;
	enum col_kind kind;
	size_t off; /* of the double or bool in struct model_cfg */
	bool required;
} columns[] = {
#define NUM(c, f, r)                                         \
	{                                                    \
		c, COL_NUM, offsetof(struct model_cfg, f), r \
	}
	{ "name", COL_NAME, 0, true },
	{ "family", COL_FAMILY, 0, true },
	NUM("layers", layers, true),
	NUM("hidden", hidden, true),
	NUM("heads", heads, true),
	NUM("kv_heads", kv_heads, true),
	NUM("head_dim", head_dim, true),
	NUM("intermediate", intermediate, true),
	NUM("vocab", vocab, true),
	NUM("max_ctx", max_ctx, false),
	{ "tied", COL_BOOL, offsetof(struct model_cfg, tied_embeddings), false },
	{ "qkv_bias", COL_BOOL, offsetof(struct model_cfg, qkv_bias), false },
	{ "qk_norm", COL_BOOL, offsetof(struct model_cfg, qk_norm), false },
	NUM("experts", experts, false),
	NUM("experts_per_tok", experts_per_token, false),
	NUM("moe_intermediate", moe_intermediate, false),
	NUM("shared_experts", shared_experts, false),
	NUM("first_dense", first_dense_layers, false),
	NUM("q_lora_rank", q_lora_rank, false),
	NUM("kv_lora_rank", kv_lora_rank, false),
	NUM("qk_nope_head_dim", qk_nope_head_dim, false),
	NUM("qk_rope_head_dim", qk_rope_head_dim, false),
	NUM("v_head_dim", v_head_dim, false),
	NUM("sliding_window", sliding_window, false),
	NUM("sliding_every", sliding_every, false),
	{ "params_b", COL_BILLIONS, offsetof(struct model_cfg, params_published), false },
	{ "active_b", COL_BILLIONS, offsetof(struct model_cfg, active_published), false },
	{ "vision_b", COL_BILLIONS, offsetof(struct model_cfg, vision_params), false },
	{ "aliases", COL_ALIASES, 0, false },
	{ "source", COL_SOURCE, 0, true },
#undef NUM
};

#define MAX_COLS 40

/* counts past 2^53 are not whole numbers in a double, and no model has one */
#define COUNT_MAX 9007199254740992.0

/*
 * One cell as a number into *v: "?" is unknown (NAN); 0, or -1 when the cell
 * is no number at all, or not a finite one from 0 to 2^53.
 */
static int
cell_num(const char *cell, size_t len, double *v)
{
	char buf[64], *end;

	if (len == 1 && *cell == '?') {
		*v = NAN;
		return 0;
	}
	if (!len || len >= sizeof(buf))
		return -1;
	memcpy(buf, cell, len);
	buf[len] = '\0';
	*v = strtod(buf, &end);
	return end == buf || *end || !(*v >= 0 && *v <= COUNT_MAX) ? -1 : 0;
}

/* One cell into its field; -1 (with err) when the cell is not of its kind. */
static int
set_cell(struct model_cfg *m, const struct column *c, const char *cell, size_t len,
         const char *file, size_t line, struct err *err)
{
	char *base = (char *)m;
	double v;

	switch (c->kind) {
	case COL_NAME:
		if (!len || len >= sizeof(m->name))
			return err_set(err, E_PARSE, "%s:%zu: the name is empty or over %zu bytes",
			               file, line, sizeof(m->name) - 1);
		snprintf(m->name, sizeof(m->name), "%.*s", (int)len, cell);
		break;
	case COL_FAMILY:
		if (!len || len >= sizeof(m->family))
			return err_set(err, E_PARSE,
			               "%s:%zu: the family is empty or over %zu bytes", file, line,
			               sizeof(m->family) - 1);
		snprintf(m->family, sizeof(m->family), "%.*s", (int)len, cell);
		break;
	case COL_ALIASES:
		/* "-" (or nothing) is none: the static "" of model_clear stays */
		if (len && !(len == 1 && *cell == '-'))
			m->aliases = xstrndup(cell, len);
		break;
	case COL_SOURCE:
		if (len)
			m->source = xstrndup(cell, len);
		break;
	case COL_BOOL:
		if (len == 3 && !strncmp(cell, "yes", 3))
			*(bool *)(void *)(base + c->off) = true;
		else if (len == 2 && !strncmp(cell, "no", 2))
			*(bool *)(void *)(base + c->off) = false;
		else
			return err_set(err, E_PARSE, "%s:%zu: %s \"%.*s\" is not yes or no", file,
			               line, c->name, (int)(len > 32 ? 32 : len), cell);
		break;
	case COL_BILLIONS:
	case COL_NUM:
		if (cell_num(cell, len, &v) < 0)
			return err_set(err, E_PARSE, "%s:%zu: %s \"%.*s\" is not a count or ?",
			               file, line, c->name, (int)(len > 32 ? 32 : len), cell);
		*(double *)(void *)(base + c->off) = c->kind == COL_BILLIONS ? v * 1e9 : v;
		break;
	}
	return 0;
}

static void
model_clear(struct model_cfg *m)
{
	memset(m, 0, sizeof(*m));
	m->max_ctx = NAN;
	m->params_published = NAN;
	m->active_published = NAN;
	m->aliases = "";
	m->source = "";
}

/* the tab-separated cells of one line, at most MAX_COLS + 1 (more is an error) */
static size_t
split_cells(const char *p, const char *eol, const char **cell, size_t *len)
{
	size_t n = 0;

	for (const char *q = p; n <= MAX_COLS && q <= eol; n++) {
		const char *tab = memchr(q, '\t', (size_t)(eol - q));

		cell[n] = q;
		len[n] = (size_t)((tab ? tab : eol) - q);
		q = (tab ? tab : eol) + 1;
	}
	return n;
}

/* the header line: which column is which; 0 or -1 with err */
static int
parse_header(const char **cell, const size_t *len, size_t n, const struct column **map,
             const char *file, size_t line, struct err *err)
{
	for (size_t i = 0; i < n; i++) {
		map[i] = NULL;
		for (size_t j = 0; j < ARRAY_SIZE(columns); j++)
			if (strlen(columns[j].name) == len[i] &&
			    !strncmp(columns[j].name, cell[i], len[i]))
				map[i] = &columns[j];
		for (size_t k = 0; map[i] && k < i; k++)
			if (map[k] == map[i])
				return err_set(err, E_PARSE, "%s:%zu: column \"%s\" twice", file,
				               line, map[i]->name);
	}
	for (size_t j = 0; j < ARRAY_SIZE(columns); j++) {
		bool found = false;

		for (size_t i = 0; i < n; i++)
			found |= map[i] == &columns[j];
		if (columns[j].required && !found)
			return err_set(err, E_PARSE, "%s:%zu: the header has no \"%s\" column",
			               file, line, columns[j].name);
	}
	return 0;
}

void
model_table_free(struct model_cfg *rows, size_t nr)
{
	/* the strings were xstrndup'd here (the static "" of model_clear is never freed) */
	for (size_t i = 0; rows && i < nr; i++) {
		if (rows[i].aliases && rows[i].aliases[0])
			free((void *)(uintptr_t)rows[i].aliases);
		if (rows[i].source && rows[i].source[0])
			free((void *)(uintptr_t)rows[i].source);
	}
	free(rows);
}

int
model_table_parse(const char *text, size_t len, const char *file, struct model_cfg **rows,
                  size_t *nr, struct err *err)
{
	const char *p = text, *end = text + len, *next;
	const struct column *map[MAX_COLS + 1] = { NULL };
	struct model_cfg *t = NULL;
	size_t ncols = 0, n = 0, alloc = 0, line = 0;

	*rows = NULL;
	*nr = 0;
	for (; p < end; p = next) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *cell[MAX_COLS + 1];
		size_t clen[MAX_COLS + 1], nc;

		line++;
		if (!eol)
			eol = end;
		next = eol < end ? eol + 1 : end;
		if (eol > p && eol[-1] == '\r')
			eol--; /* a CRLF line end reads as LF */
		if (*p == '#' || eol == p)
			continue;
		nc = split_cells(p, eol, cell, clen);
		if (nc > MAX_COLS) {
			err_set(err, E_PARSE, "%s:%zu: more than %d columns", file, line, MAX_COLS);
			goto fail;
		}
		if (!ncols) {
			if (parse_header(cell, clen, nc, map, file, line, err) < 0)
				goto fail;
			ncols = nc;
			continue;
		}
		if (nc != ncols) {
			err_set(err, E_PARSE, "%s:%zu: %zu cells, the header has %zu", file, line,
			        nc, ncols);
			goto fail;
		}
		ALLOC_GROW(t, n + 1, alloc);
		model_clear(&t[n]);
		n++;
		for (size_t i = 0; i < nc; i++)
			if (map[i] &&
			    set_cell(&t[n - 1], map[i], cell[i], clen[i], file, line, err) < 0)
				goto fail;
	}
	if (!ncols) {
		err_set(err, E_PARSE, "%s: no header line", file);
		goto fail;
	}
	*rows = t;
	*nr = n;
	return 0;
fail:
	model_table_free(t, n);
	return E_PARSE;
}

static struct err catalog_err = ERR_INIT;

static void
parse_catalog(void)
{
	/* the built-in table is tested to parse (t_models); should it not, there is no catalog */
	if (model_table_parse(models_tsv, (size_t)(models_tsv_end - models_tsv),
	                      "data/models/models.tsv", &catalog, &catalog_nr, &catalog_err) < 0) {
		catalog = NULL;
		catalog_nr = 0;
	}
}

size_t
model_catalog(const struct model_cfg **out)
{
	pthread_once(&catalog_once, parse_catalog);
	*out = catalog;
	return catalog_nr;
}

/* ---- names ---- */

/* Lowercase, '-', '_', '.' and blanks left out: "Llama-3.1 8B" -> "llama318b". */
static void
norm_name(char *dst, size_t size, const char *s)
{
	size_t n = 0;

	for (; *s && n + 1 < size; s++) {
		if (*s == '-' || *s == '_' || *s == '.' || isspace((unsigned char)*s))
			continue;
		dst[n++] = (char)tolower((unsigned char)*s);
	}
	dst[n] = '\0';
}

static bool
has_json_ext(const char *s)
{
	size_t n = strlen(s);

	return n > 5 && !strcasecmp(s + n - 5, ".json");
}

/*
 * Whether row m is key (normalised), by its name or one of its aliases; with
 * prefix, whether key begins one. The name matched goes to as (may be NULL).
 */
static bool
row_matches(const struct model_cfg *m, const char *key, bool prefix, char *as, size_t size)
{
	size_t k = strlen(key);
	char nm[sizeof(m->name)];
	const char *a = m->aliases ? m->aliases : "";

	norm_name(nm, sizeof(nm), m->name);
	if (prefix ? !strncmp(nm, key, k) : !strcmp(nm, key)) {
		if (as)
			snprintf(as, size, "%s", m->name);
		return true;
	}
	while (*a) {
		const char *comma = strchr(a, ','), *e = comma ? comma : a + strlen(a);
		char one[sizeof(m->name)];

		snprintf(one, sizeof(one), "%.*s", (int)(e - a), a);
		norm_name(nm, sizeof(nm), one);
		if (nm[0] && (prefix ? !strncmp(nm, key, k) : !strcmp(nm, key))) {
			if (as)
				snprintf(as, size, "%s", one);
			return true;
		}
		a = comma ? comma + 1 : e;
	}
	return false;
}

/* The catalog row key (normalised) names; with prefix, the one row key begins. */
static const struct model_cfg *
find_norm(const char *key, bool prefix, size_t *nr_match, char *as, size_t size)
{
	const struct model_cfg *t, *hit = NULL;
	size_t n = model_catalog(&t);

	*nr_match = 0;
	for (size_t i = 0; i < n; i++) {
		if (row_matches(&t[i], key, prefix, hit ? NULL : as, size)) {
			hit = hit ? hit : &t[i];
			(*nr_match)++;
		}
	}
	return hit;
}

/*
 * Name tokens that say how a checkpoint was tuned, packed or quantised, not
 * what shape it has: "Llama-2-7b-chat-hf", "Qwen2.5-7B-Instruct-AWQ",
 * "Llama-3.2-3B-Instruct-unsloth-bnb-4bit", "gemma-3-1b-pt".
 */
static bool
neutral_token(const char *t, size_t n)
{
	static const char *const words[] = {
		"instruct", "chat",    "base", "hf",   "it",   "pt",      "bnb",  "4bit",
		"8bit",     "unsloth", "gguf", "awq",  "gptq", "fp8",     "fp16", "bf16",
		"int4",     "int8",    "mlx",  "exl2", "qat",  "dynamic",
	};

	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
		if (strlen(words[i]) == n && !strncasecmp(t, words[i], n))
			return true;
	return false;
}

/* a GGUF type token ("Q4", "q8", "IQ3"): it and all after it are how the file is quantised */
static bool
gguf_token(const char *t, size_t n)
{
	if (n >= 2 && (t[0] == 'i' || t[0] == 'I') && (t[1] == 'q' || t[1] == 'Q'))
		t++, n--;
	return n >= 2 && (t[0] == 'q' || t[0] == 'Q') && isdigit((unsigned char)t[1]);
}

/*
 * name as its shape: the organisation prefix, a ".gguf" ending, a leading
 * "Meta-" (Meta-Llama-3-8B) and the neutral tokens left out, then normalised.
 */
static void
clean_name(char *dst, size_t size, const char *name)
{
	const char *slash = strrchr(name, '/'), *p = slash ? slash + 1 : name;
	size_t len = strlen(p), ntok = 0;
	struct strbuf sb = STRBUF_INIT;

	if (len > 5 && !strcasecmp(p + len - 5, ".gguf"))
		len -= 5;
	for (size_t i = 0; i < len;) {
		size_t j = i;

		while (j < len && p[j] != '-' && p[j] != '_' && !isspace((unsigned char)p[j]))
			j++;
		if (j > i) {
			if (gguf_token(p + i, j - i))
				break;
			if (!neutral_token(p + i, j - i) &&
			    !(ntok == 0 && j - i == 4 && !strncasecmp(p + i, "meta", 4) &&
			      j + 1 < len && !strncasecmp(p + j + 1, "llama", 5)))
				strbuf_addf(&sb, "%s%.*s", sb.len ? "-" : "", (int)(j - i), p + i);
			ntok++;
		}
		i = j + 1;
	}
	norm_name(dst, size, sb.len ? sb.buf : "");
	strbuf_release(&sb);
}

int
model_lookup(const char *name, struct model_cfg *out, struct err *err)
{
	const struct model_cfg *t, *hit, *close[3] = { NULL };
	size_t n = model_catalog(&t), nr = 0, nr_prefix = 0, dist[3] = { 0 };
	const char *slash = name ? strrchr(name, '/') : NULL;
	char key[128], clean[128], nm[sizeof(t->name)], as[sizeof(t->name)] = "";
	struct strbuf sb = STRBUF_INIT;

	if (!n && catalog_err.code)
		return err_set(err, E_PARSE, "%s", catalog_err.msg);
	norm_name(key, sizeof(key), slash ? slash + 1 : name ? name : "");
	if (!key[0])
		return err_set(err, E_USAGE, "no model name given");
	clean_name(clean, sizeof(clean), name);
	/* the name as typed, then without what does not change the shape */
	hit = find_norm(key, false, &nr, as, sizeof(as));
	if (!hit && clean[0])
		hit = find_norm(clean, false, &nr, as, sizeof(as));
	if (!hit && clean[0]) {
		/* a unique beginning ("qwen2.5-72"); several ("mistral-7b") is no answer */
		hit = find_norm(clean, true, &nr_prefix, NULL, 0);
		if (nr_prefix != 1)
			hit = NULL;
		as[0] = '\0';
	}
	if (hit) {
		*out = *hit;
		if (as[0])
			snprintf(out->name, sizeof(out->name), "%s", as);
		return 0;
	}
	/* up to three close names: the ones the shape key begins, then the nearest by edits */
	if (!clean[0])
		snprintf(clean, sizeof(clean), "%s", key);
	for (size_t i = 0; i < n; i++) {
		size_t d;

		norm_name(nm, sizeof(nm), t[i].name);
		d = !strncmp(nm, clean, strlen(clean)) ? 0 : str_distance(clean, nm);
		if (d > strlen(clean) / 2 + 2)
			continue;
		for (size_t j = 0; j < 3; j++) {
			if (!close[j] || d < dist[j]) {
				for (size_t k = 2; k > j; k--) {
					close[k] = close[k - 1];
					dist[k] = dist[k - 1];
				}
				close[j] = &t[i];
				dist[j] = d;
				break;
			}
		}
	}
	for (size_t j = 0; j < 3 && close[j]; j++)
		strbuf_addf(&sb, "%s%s", j ? ", " : "", close[j]->name);
	if (sb.len)
		err_set(err, E_NOTFOUND, "%s model \"%s\" (close: %s)",
		        nr_prefix > 1 ? "ambiguous" : "unknown", name, sb.buf);
	else
		err_set(err, E_NOTFOUND,
		        "unknown model \"%s\" (not in the catalog, not a size like 7b, not a "
		        "config.json)",
		        name);
	strbuf_release(&sb);
	return E_NOTFOUND;
}

/* ---- the arithmetic ---- */

/* optional counts: unknown is none */
static double
z(double v)
{
	return isnan(v) ? 0 : v;
}

static double
norms_per_layer(const struct model_cfg *m)
{
	/* Gemma 2 and 3 norm before and after both attention and MLP ("gemma3_text" too) */
	return !strncmp(m->family, "gemma2", 6) || !strncmp(m->family, "gemma3", 6) ? 4 : 2;
}

static double
attention_params(const struct model_cfg *m)
{
	double h = m->hidden, heads = m->heads;

	if (z(m->kv_lora_rank) > 0) {
		double ql = z(m->q_lora_rank), kl = m->kv_lora_rank, rope = m->qk_rope_head_dim;
		double qk = m->qk_nope_head_dim + rope, q, kv;

		/* q_a, q_a_norm, q_b; or one q projection without a q rank */
		q = ql > 0 ? h * ql + ql + ql * heads * qk : h * heads * qk;
		/* kv_a (latent and the shared rope key), kv_a_norm, kv_b */
		kv = h * (kl + rope) + kl + kl * heads * (m->qk_nope_head_dim + m->v_head_dim);
		return q + kv + heads * m->v_head_dim * h;
	} else {
		double q = heads * m->head_dim, kv = m->kv_heads * m->head_dim;
		double p = h * q + 2 * h * kv + q * h;

		if (m->qkv_bias)
			p += q + 2 * kv;
		if (m->qk_norm)
			p += 2 * m->head_dim; /* q_norm and k_norm weigh one head's width each */
		return p;
	}
}

static void
count_params(const struct model_cfg *m, double *total, double *active)
{
	double h = m->hidden, layers = m->layers;
	double emb = m->vocab * h * (m->tied_embeddings ? 1 : 2);
	double shared = emb + layers * (attention_params(m) + norms_per_layer(m) * h) + h;
	double dense_mlp = 3 * h * m->intermediate;

	if (z(m->experts) > 0) {
		double width = z(m->moe_intermediate) > 0 ? m->moe_intermediate : m->intermediate;
		double expert = 3 * h * width, dense = z(m->first_dense_layers);
		double fixed = h * m->experts + z(m->shared_experts) * expert;
		double moe_layers = layers - dense;

		*total = shared + dense * dense_mlp + moe_layers * (fixed + m->experts * expert);
		*active = shared + dense * dense_mlp +
		          moe_layers * (fixed + z(m->experts_per_token) * expert);
	} else {
		*total = *active = shared + layers * dense_mlp;
	}
	/* a vision encoder loads with the model (memory) but text tokens do not pass it (speed) */
	*total += z(m->vision_params);
}

double
model_params(const struct model_cfg *m)
{
	double total, active;

	count_params(m, &total, &active);
	return total;
}

double
model_active_params(const struct model_cfg *m)
{
	double total, active;

	count_params(m, &total, &active);
	return active;
}

/* KV-cache bytes of one layer for one token */
static double
kv_layer_token(const struct model_cfg *m, double bytes)
{
	if (z(m->kv_lora_rank) > 0)
		return (m->kv_lora_rank + m->qk_rope_head_dim) * bytes;
	return 2 * m->kv_heads * m->head_dim * bytes;
}

double
model_kv_bytes_per_token(const struct model_cfg *m, double bytes_per_value)
{
	return m->layers * kv_layer_token(m, bytes_per_value);
}

double
model_kv_bytes(const struct model_cfg *m, double ctx, double bytes_per_value)
{
	double window = z(m->sliding_window), global = m->layers, windowed = 0;

	if (window > 0) {
		double every = z(m->sliding_every);

		global = every > 0 ? floor(m->layers / every) : 0;
		windowed = m->layers - global;
	}
	return kv_layer_token(m, bytes_per_value) *
	       (global * ctx + windowed * (ctx < window ? ctx : window));
}

/* ---- a bare size ---- */

/*
 * "7b", "1.5B", "500m", "8x7b": 0 with the size in parameters and the
 * number of experts (0 for a dense size); -1 when s is no size.
 */
static int
parse_size(const char *s, double *params, double *experts)
{
	const char *p = s;
	char num[32];
	size_t n = 0;
	double scale;

	*experts = 0;
	if (!isdigit((unsigned char)*p))
		return -1;
	while (isdigit((unsigned char)p[n]))
		n++;
	if (p[n] == 'x' || p[n] == 'X') {
		if (n > 4)
			return -1;
		snprintf(num, sizeof(num), "%.*s", (int)n, p);
		*experts = strtod(num, NULL);
		if (*experts < 1)
			*experts = -1; /* "0x7b": said, and none */
		p += n + 1;
		n = 0;
		if (!isdigit((unsigned char)*p))
			return -1;
		while (isdigit((unsigned char)p[n]))
			n++;
	}
	if (p[n] == '.') {
		n++;
		if (!isdigit((unsigned char)p[n]))
			return -1;
		while (isdigit((unsigned char)p[n]))
			n++;
	}
	if (n >= sizeof(num))
		return -1;
	snprintf(num, sizeof(num), "%.*s", (int)n, p);
	if ((p[n] == 'b' || p[n] == 'B') && !p[n + 1])
		scale = 1e9;
	else if ((p[n] == 'm' || p[n] == 'M') && !p[n + 1])
		scale = 1e6;
	else
		return -1;
	*params = strtod(num, NULL) * scale;
	return 0;
}

/* A size-shaped string, whether or not its value is accepted ("0b" is one). */
static bool
looks_like_size(const char *s)
{
	double p, e;

	return s && parse_size(s, &p, &e) == 0;
}

/*
 * hidden width for a dense model of params parameters, interpolated (log-log)
 * between the catalog's dense Llama rows, extrapolated past the ends
 */
static double
generic_hidden(double params)
{
	static const char *const anchors[] = { "Llama-2-7B", "Llama-2-13B", "Llama-2-70B",
		                               "Llama-3.1-405B" };
	double x[ARRAY_SIZE(anchors)], y[ARRAY_SIZE(anchors)], h;
	size_t n = 0, i;

	for (i = 0; i < ARRAY_SIZE(anchors); i++) {
		struct model_cfg m;

		if (model_lookup(anchors[i], &m, NULL) == 0 && !isnan(model_params(&m))) {
			x[n] = log(model_params(&m));
			y[n] = log(m.hidden);
			n++;
		}
	}
	if (n < 2)
		return 4096; /* no catalog: cannot happen with the table built in */
	for (i = 1; i + 1 < n && log(params) > x[i]; i++)
		;
	h = exp(y[i - 1] + (y[i] - y[i - 1]) * (log(params) - x[i - 1]) / (x[i] - x[i - 1]));
	h = round(h / 128) * 128;
	return h < 256 ? 256 : h;
}

static double
round_up(double v, double to)
{
	return ceil(v / to) * to;
}

/* the number of layers that brings m (a dense shape) nearest params */
static void
solve_layers(struct model_cfg *m, double params)
{
	double base, per;

	m->layers = 0;
	base = model_params(m);
	m->layers = 1;
	per = model_params(m) - base;
	m->layers = round((params - base) / per);
	if (m->layers < 1)
		m->layers = 1;
}

/*
 * A few layers (small models) are coarse steps: more than 1 % off, the MLP
 * width (a multiple of 128) takes up the rest.
 */
static void
trim_width(struct model_cfg *m, double params)
{
	double off = params - model_params(m), width;

	if (fabs(off) <= 0.01 * params)
		return;
	width = round((m->intermediate + off / (m->layers * 3 * m->hidden)) / 128) * 128;
	if (width >= m->hidden)
		m->intermediate = width;
}

int
model_from_size(const char *s, struct model_cfg *out, struct err *err)
{
	double params, experts;

	if (!s || parse_size(s, &params, &experts) < 0)
		return err_set(err, E_USAGE, "\"%s\" is not a model size (like 7b, 1.5b, 8x7b)",
		               s ? s : "");
	if (!(params >= 1e7) || params > 1e13)
		return err_set(err, E_USAGE, "model size \"%s\" is out of range (10m to 10000b)",
		               s);
	if (experts && (experts < 2 || experts > 1024))
		return err_set(err, E_USAGE, "\"%s\": the number of experts must be 2 to 1024", s);
	model_clear(out);
	snprintf(out->name, sizeof(out->name), "generic-%s", s);
	snprintf(out->family, sizeof(out->family), "generic");
	out->hidden = generic_hidden(params);
	out->head_dim = 128;
	out->heads = out->hidden / 128;
	out->vocab = 32000;
	out->tied_embeddings = false;
	if (experts) {
		/* Mixtral-like: Mistral-7B-like experts (GQA 8, MLP 3.5 x hidden), top 2 */
		out->kv_heads = 8;
		out->intermediate = round_up(3.5 * out->hidden, 256);
		out->max_ctx = 32768;
		solve_layers(out, params);
		out->experts = experts;
		out->experts_per_token = 2;
		out->moe_intermediate = out->intermediate;
		out->source =
		        "generic Mixtral-like mixture of experts, each expert a dense model of "
		        "the size (gpuscope's interpolation of the catalog's Llama shapes)";
	} else {
		/* Llama-2-like: multi-head attention below 30B, GQA with 8 KV heads above */
		bool big = params >= 30e9;

		out->kv_heads = big ? 8 : out->heads;
		out->intermediate =
		        big ? round_up(3.5 * out->hidden, 256) : round_up(8 * out->hidden / 3, 256);
		out->max_ctx = 4096;
		solve_layers(out, params);
		trim_width(out, params);
		out->source = "generic dense Llama-like shape (gpuscope's interpolation of the "
		              "catalog's Llama shapes)";
	}
	return 0;
}

/* ---- config.json ---- */

/*
 * The member key of root, or else of root's "text_config" (multimodal
 * configs: LLaVA, Gemma 3, Mllama keep the language model's shape there);
 * NULL when neither has it or it is null.
 */
static const json_t *
cfg_get(const json_t *root, const char *key)
{
	const json_t *v = json_object_get(root, key), *text;

	if (v && !json_is_null(v))
		return v;
	text = json_object_get(root, "text_config");
	v = json_is_object(text) ? json_object_get(text, key) : NULL;
	return v && !json_is_null(v) ? v : NULL;
}

/* A number (or boolean, as 0 or 1) at key into *v: 1; absent or null: 0; something else: -1. */
static int
cfg_num(const json_t *root, const char *key, double *v)
{
	const json_t *x = cfg_get(root, key);

	if (!x)
		return 0;
	if (json_is_number(x))
		*v = json_number_value(x);
	else if (json_is_boolean(x))
		*v = json_is_true(x);
	else
		return -1;
	return 1;
}

static void
config_name(char *buf, size_t size, const char *path)
{
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	size_t len = strlen(base);

	if (!strcmp(base, "config.json") && slash && slash > path) {
		/* ".../Llama-3.1-8B/config.json": the directory names the model */
		const char *d = slash;

		while (d > path && d[-1] != '/')
			d--;
		snprintf(buf, size, "%.*s", (int)(slash - d), d);
		if (buf[0] && strcmp(buf, "."))
			return;
	}
	if (has_json_ext(base))
		len -= 5;
	snprintf(buf, size, "%.*s", (int)len, base);
}

static int
config_fill(const json_t *j, const char *path, struct model_cfg *out, struct err *err)
{
	static const struct {
		const char *key;
		size_t off;
		bool required;
	} keys[] = {
#define K(k, f, r) { k, offsetof(struct model_cfg, f), r }
		K("num_hidden_layers", layers, true),
		K("hidden_size", hidden, true),
		K("num_attention_heads", heads, true),
		K("vocab_size", vocab, true),
		K("intermediate_size", intermediate, false),
		K("num_key_value_heads", kv_heads, false),
		K("head_dim", head_dim, false),
		K("max_position_embeddings", max_ctx, false),
		K("num_local_experts", experts, false),
		K("n_routed_experts", experts, false),
		K("num_experts", experts, false), /* Qwen2-MoE, Qwen3-MoE */
		K("num_experts_per_tok", experts_per_token, false),
		K("moe_intermediate_size", moe_intermediate, false),
		K("n_shared_experts", shared_experts, false),
		K("first_k_dense_replace", first_dense_layers, false),
		K("q_lora_rank", q_lora_rank, false),
		K("kv_lora_rank", kv_lora_rank, false),
		K("qk_nope_head_dim", qk_nope_head_dim, false),
		K("qk_rope_head_dim", qk_rope_head_dim, false),
		K("v_head_dim", v_head_dim, false),
		K("sliding_window", sliding_window, false),
		K("sliding_window_pattern", sliding_every, false),
		K("_sliding_window_pattern", sliding_every,
		  false), /* Gemma 3, newer transformers */
#undef K
	};
	const json_t *type = cfg_get(j, "model_type");
	double v;
	int r;

	model_clear(out);
	out->max_ctx = NAN;
	out->intermediate = NAN;
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		r = cfg_num(j, keys[i].key, &v);
		if (r < 0)
			return err_set(err, E_PARSE, "%s: \"%s\" is not a number", path,
			               keys[i].key);
		if (r > 0 && !(v >= 0 && v <= COUNT_MAX))
			return err_set(err, E_PARSE, "%s: \"%s\" is not a count", path,
			               keys[i].key);
		if (r > 0)
			*(double *)(void *)((char *)out + keys[i].off) = v;
		else if (keys[i].required)
			return err_set(err, E_PARSE, "%s: no \"%s\" in the model config", path,
			               keys[i].key);
	}
	if (!(out->layers >= 1) || !(out->hidden >= 1) || !(out->heads >= 1))
		return err_set(err, E_PARSE,
		               "%s: num_hidden_layers, hidden_size and "
		               "num_attention_heads must be positive",
		               path);
	if (isnan(out->intermediate) && !(out->experts > 0 && out->moe_intermediate > 0))
		return err_set(err, E_PARSE, "%s: no \"intermediate_size\" in the model config",
		               path);
	config_name(out->name, sizeof(out->name), path);
	snprintf(out->family, sizeof(out->family), "%.*s", (int)sizeof(out->family) - 1,
	         json_is_string(type) ? json_string_value(type) : "generic");
	if (!out->kv_heads)
		out->kv_heads = out->heads;
	if (out->kv_lora_rank > 0)
		out->head_dim = out->qk_nope_head_dim + out->qk_rope_head_dim;
	else if (!out->head_dim)
		out->head_dim = out->hidden / out->heads;
	if (out->experts > 0 && !out->moe_intermediate)
		out->moe_intermediate = out->intermediate; /* Mixtral: experts as wide as the MLP */
	if (out->experts > 0 && isnan(out->intermediate))
		out->intermediate = out->moe_intermediate;
	/* tie_word_embeddings: absent means the model class's default, true for Gemma only */
	if (cfg_num(j, "tie_word_embeddings", &v) > 0)
		out->tied_embeddings = v != 0;
	else
		out->tied_embeddings = !strncmp(out->family, "gemma", 5);
	if (cfg_num(j, "attention_bias", &v) > 0 && v != 0)
		out->qkv_bias = true;
	if (!strcmp(out->family, "qwen2"))
		out->qkv_bias = true;
	/* Qwen2 carries a sliding_window it does not use */
	if (cfg_num(j, "use_sliding_window", &v) > 0 && v == 0)
		out->sliding_window = 0;
	if (out->sliding_window > 0 && !out->sliding_every && !strcmp(out->family, "gemma2"))
		out->sliding_every = 2; /* Gemma 2 alternates local and global layers */
	if (out->sliding_window > 0 && !out->sliding_every && !strncmp(out->family, "gemma3", 6))
		out->sliding_every = 6; /* Gemma 3: 5 local layers to 1 global (its report) */
	/* Qwen3 and Gemma 3 normalise q and k per head (their modeling files' q_norm, k_norm) */
	out->qk_norm = !strncmp(out->family, "qwen3", 5) || !strncmp(out->family, "gemma3", 6);
	out->source = "Hugging Face config.json";
	return 0;
}

int
model_from_config(const char *path, struct model_cfg *out, struct err *err)
{
	struct strbuf sb = STRBUF_INIT, file = STRBUF_INIT;
	json_t *root = NULL;
	struct stat st;
	int ret;

	if (!path || !*path)
		return err_set(err, E_USAGE, "no config.json path given");
	strbuf_addstr(&file, path);
	if (!stat(path, &st) && S_ISDIR(st.st_mode))
		strbuf_addstr(&file, "/config.json");
	if (file_read_regular(file.buf, &sb, CONFIG_MAX + 1) < 0) {
		ret = err_set(err, E_NOTFOUND, "%s: cannot read it (no such file, or not a file)",
		              file.buf);
		goto out;
	}
	if (sb.len > CONFIG_MAX) {
		ret = err_set(err, E_PARSE, "%s: over 1 MiB, not a model config.json", file.buf);
		goto out;
	}
	root = jsonin_object(sb.buf, sb.len, file.buf, err);
	if (!root) {
		ret = E_PARSE;
		goto out;
	}
	ret = config_fill(root, file.buf, out, err);
out:
	json_decref(root);
	strbuf_release(&sb);
	strbuf_release(&file);
	return ret;
}

/* ---- what the command line names ---- */

int
model_resolve(const char *arg, struct model_cfg *out, struct err *err)
{
	size_t len = arg ? strlen(arg) : 0;
	struct stat st;

	if (!len)
		return err_set(err, E_USAGE, "no model given");
	if (strchr(arg, '/') || has_json_ext(arg)) {
		const char *slash = strrchr(arg, '/');

		/* "meta-llama/Llama-3.1-8B": a Hub id, when no such file is here */
		if (stat(arg, &st) < 0 && slash && slash[1] && !has_json_ext(arg) &&
		    model_lookup(slash + 1, out, NULL) == 0)
			return 0;
		/* "Qwen/Qwen2.5-Math-7B", no such file: say what the catalog has close to it */
		if (stat(arg, &st) < 0 && slash && slash[1] && slash == strchr(arg, '/') &&
		    slash > arg && arg[0] != '.' && !has_json_ext(arg))
			return model_lookup(arg, out, err);
		return model_from_config(arg, out, err);
	}
	if (looks_like_size(arg))
		return model_from_size(arg, out, err);
	return model_lookup(arg, out, err);
}
