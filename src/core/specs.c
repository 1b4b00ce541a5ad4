/*
 * The GPU spec table (data/specs/gpus.tsv, built in by specs_data.S),
 * parsed once on first use, and how a device or a typed name finds its row.
 *
 * Names are compared as tokens: lower case, split at spaces and punctuation
 * ("A100-SXM4-40GB" is a100 sxm4 40gb), with vendor and brand words
 * (NVIDIA, GeForce, AMD, Radeon, Instinct, Intel, (R), (TM), ...) left out.
 */
#include "core/specs.h"

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/gpu.h"
#include "core/strdist.h"
#include "core/xalloc.h"

extern const char gpu_specs_tsv[], gpu_specs_tsv_end[];

static struct gpu_spec *table;
static uint8_t *table_shared; /* per row: bit i = pci_id[i] is shared with other SKUs */
static size_t table_nr, table_alloc, shared_alloc;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

/* ---- parsing ---- */

enum col {
	C_NAME,
	C_VENDOR,
	C_ARCH,
	C_KIND,
	C_PCI,
	C_ALIASES,
	C_MEM_GIB,
	C_MEM_MIB,
	C_RESERVED_MIB,
	C_MEM_TYPE,
	C_BW,
	C_FP64,
	C_FP64T,
	C_FP32,
	C_TF32,
	C_FP16,
	C_BF16,
	C_FP8,
	C_INT8,
	C_FP4,
	C_TDP,
	C_PCIE,
	C_SOURCE,
	C_NOTES,
	C__COUNT
};

static const char *const col_name[C__COUNT] = {
	"name",        "vendor",  "arch",         "kind",     "pci_ids",    "aliases",
	"mem_gib",     "mem_mib", "reserved_mib", "mem_type", "mem_bw_gbs", "fp64",
	"fp64_tensor", "fp32",    "tf32",         "fp16",     "bf16",       "fp8",
	"int8",        "fp4",     "tdp_w",        "pcie",     "source",     "notes",
};

static bool
cell_unknown(const char *c)
{
	return !*c || !strcmp(c, "?") || !strcmp(c, "-");
}

static const char *
cell_str(const char *c)
{
	return c && !cell_unknown(c) ? c : "";
}

/*
 * A plain decimal such as "989" or "3.35" with at most 15 digits: its
 * digits as an integer and the power of ten to divide it by are both exact
 * doubles, so one division rounds it as strtod() does. False for anything
 * else, which goes to strtod().
 */
static bool
plain_decimal(const char *c, double *v)
{
	static const double pow10[] = { 1,   1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
		                        1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15 };
	unsigned long long m = 0;
	int digits = 0, frac = -1; /* digits after the point; -1 before it */

	for (; *c; c++) {
		if (*c == '.' && frac < 0 && digits) {
			frac = 0;
			continue;
		}
		if (*c < '0' || *c > '9' || ++digits > 15)
			return false;
		m = m * 10 + (unsigned long long)(*c - '0');
		if (frac >= 0)
			frac++;
	}
	if (!digits || frac == 0)
		return false;
	*v = (double)m / pow10[frac < 0 ? 0 : frac];
	return true;
}

/* A number, or NAN for "?", "-", "" and anything not wholly a number. */
static double
cell_num(const char *c)
{
	char *end;
	double v;

	if (!c || cell_unknown(c))
		return NAN;
	/* the spec sheet has hundreds of numbers: most without strtod() */
	if (plain_decimal(c, &v))
		return v;
	v = strtod(c, &end);
	return end != c && !*end && isfinite(v) ? v : NAN;
}

/*
 * "10de:2330", four hex digits each, as the sscanf() below reads it but
 * without its cost (the sheet lists hundreds); false leaves it to sscanf().
 */
static bool
hex_pair(const char *c, unsigned *vendor, unsigned *device)
{
	unsigned v[2] = { 0, 0 };

	for (int i = 0; i < 9; i++) {
		int x;

		if (i == 4) {
			if (c[i] != ':')
				return false;
			continue;
		}
		if (c[i] >= '0' && c[i] <= '9')
			x = c[i] - '0';
		else if (c[i] >= 'a' && c[i] <= 'f')
			x = c[i] - 'a' + 10;
		else if (c[i] >= 'A' && c[i] <= 'F')
			x = c[i] - 'A' + 10;
		else
			return false;
		v[i > 4] = v[i > 4] * 16 + (unsigned)x;
	}
	*vendor = v[0];
	*device = v[1];
	return true;
}

/* "10de:2330,1002:744c*" */
static void
cell_pci(struct gpu_spec *r, uint8_t *shared, const char *c)
{
	size_t n = 0;

	while (c && *c && n < ARRAY_SIZE(r->pci_id)) {
		unsigned vendor, device;
		int used = 0;

		if (hex_pair(c, &vendor, &device) ||
		    (sscanf(c, "%4x:%4x%n", &vendor, &device, &used) == 2 && used == 9)) {
			c += 9;
			if (*c == '*') {
				*shared |= (uint8_t)(1u << n);
				c++;
			}
			r->pci_id[n++] = (uint32_t)device << 16 | vendor;
		}
		c = strchr(c, ',');
		if (c)
			c++;
	}
}

/* ---- memory: from the size as sold to what a program can allocate ---- */

#define MIB 1048576.0
#define GIB 1073741824.0

static bool
mem_type_is(const struct gpu_spec *r, const char *prefix)
{
	return !strncasecmp(r->mem_type, prefix, strlen(prefix));
}

/*
 * What cards of r's kind keep of the size as sold, where no capture of r
 * exists (data/specs/README.md, "Memory", lists each capture):
 * - NVIDIA HBM3 / HBM3e (Hopper, Blackwell): H100 SXM5 shows 81559 of
 *   81920 MiB, 0.44 %; the H200 (143771 of 144384 MiB, 0.42 %) and B200
 *   (183359 of 184320, 0.52 %) agree within a tenth of a point.
 * - NVIDIA HBM2 / HBM2e on Hopper (H100 PCIe) as HBM3 above; on Ampere
 *   and Volta nothing: A100 40 and 80 GB and A800 80 GB show 40960 and
 *   81920 MiB with current drivers.
 * - GDDR6X: 1/2048 (RTX 4090 24564, RTX 4080 SUPER 16376 MiB); the RTX
 *   3090 shows all 24576 and has its capture.
 * - GDDR6 on a data-centre card, which runs ECC by default: ECC's 1/16
 *   and 12 MiB more (L40S 46068 and A10 23028 MiB; L4 23034, T4 15360).
 * - GDDR6 elsewhere (ECC off): nothing (RTX 2080 SUPER 8192 MiB).
 * - GDDR7: 0.49 % (RTX 5090 32607 of 32768 MiB).
 * - AMD: 16 MiB (amdgpu's mem_info_vram_total of an RX 6900 XT and a
 *   Vega 56 in LACT's sysfs captures); Intel and Huawei: no capture seen,
 *   nothing taken off.
 */
static double
sold_reserve_rule(const struct gpu_spec *r)
{
	double sold = r->mem_gib * GIB;
	bool hbm = mem_type_is(r, "HBM");

	if (!strcmp(r->vendor, "AMD"))
		return 16 * MIB;
	if (strcmp(r->vendor, "NVIDIA"))
		return 0;
	if (hbm &&
	    (mem_type_is(r, "HBM3") || !strcmp(r->arch, "Hopper") || !strcmp(r->arch, "Blackwell")))
		return sold * (361.0 / 81920.0);
	if (hbm)
		return 0;
	if (mem_type_is(r, "GDDR6X"))
		return sold / 2048;
	if (mem_type_is(r, "GDDR7"))
		return sold * (161.0 / 32768.0);
	if (mem_type_is(r, "GDDR6") && !strcmp(r->kind, "datacenter"))
		return sold / 16 + 12 * MIB;
	return 0;
}

static void
parse_row(char **cell, size_t nr_cell, const int *map)
{
	const char *v[C__COUNT];
	struct gpu_spec *r;

	for (int i = 0; i < C__COUNT; i++)
		v[i] = map[i] >= 0 && (size_t)map[i] < nr_cell ? cell[map[i]] : NULL;
	if (!v[C_NAME] || cell_unknown(v[C_NAME]))
		return;
	ALLOC_GROW(table, table_nr + 1, table_alloc);
	ALLOC_GROW(table_shared, table_nr + 1, shared_alloc);
	r = &table[table_nr];
	memset(r, 0, sizeof(*r));
	table_shared[table_nr] = 0;
	table_nr++;

	r->name = v[C_NAME];
	r->vendor = cell_str(v[C_VENDOR]);
	r->arch = cell_str(v[C_ARCH]);
	r->kind = cell_str(v[C_KIND]);
	cell_pci(r, &table_shared[table_nr - 1], v[C_PCI]);
	r->aliases = cell_str(v[C_ALIASES]);
	r->mem_gib = cell_num(v[C_MEM_GIB]);
	r->mem_bytes = cell_num(v[C_MEM_MIB]) * MIB;
	r->reserved_bytes = cell_num(v[C_RESERVED_MIB]) * MIB;
	r->mem_type = cell_str(v[C_MEM_TYPE]);
	r->mem_bw_gbs = cell_num(v[C_BW]);
	r->fp64 = cell_num(v[C_FP64]);
	r->fp64_tensor = cell_num(v[C_FP64T]);
	r->fp32 = cell_num(v[C_FP32]);
	r->tf32 = cell_num(v[C_TF32]);
	r->fp16 = cell_num(v[C_FP16]);
	r->bf16 = cell_num(v[C_BF16]);
	r->fp8 = cell_num(v[C_FP8]);
	r->int8 = cell_num(v[C_INT8]);
	r->fp4 = cell_num(v[C_FP4]);
	r->tdp_w = cell_num(v[C_TDP]);
	if (v[C_PCIE] && sscanf(v[C_PCIE], "%dx%d", &r->pcie_gen, &r->pcie_width) != 2)
		r->pcie_gen = r->pcie_width = 0;
	r->source = cell_str(v[C_SOURCE]);
	r->notes = cell_str(v[C_NOTES]);
	/* a capture is what the card shows; without one, the rule of its memory kind */
	r->mem_measured = isfinite(r->mem_bytes) && r->mem_bytes > 0;
	if (!r->mem_measured)
		r->mem_bytes = r->mem_gib > 0 ? r->mem_gib * GIB - sold_reserve_rule(r) : NAN;
	if (!(r->reserved_bytes >= 0))
		r->reserved_bytes = NAN;
}

/*
 * One copy of the text, cut into cells in place: the rows' strings point
 * into it and live as long as the program.
 */
static void
parse_table(void)
{
	size_t len = (size_t)(gpu_specs_tsv_end - gpu_specs_tsv);
	char *p = xmalloc(len + 1), *end = p + len;
	int map[C__COUNT];
	bool have_header = false;

	memcpy(p, gpu_specs_tsv, len);
	*end = '\0';
	for (int i = 0; i < C__COUNT; i++)
		map[i] = -1;
	while (p < end) {
		char *eol = memchr(p, '\n', (size_t)(end - p)), *cell[C__COUNT + 8];
		size_t n = 0;

		if (!eol)
			eol = end;
		*eol = '\0';
		if (eol > p && eol[-1] == '\r')
			eol[-1] = '\0';
		if (*p && *p != '#') {
			for (char *q = p; q && n < ARRAY_SIZE(cell); n++) {
				char *tab = strchr(q, '\t');

				cell[n] = q;
				if (tab)
					*tab++ = '\0';
				q = tab;
			}
			if (!have_header) {
				for (size_t i = 0; i < n; i++)
					for (int c = 0; c < C__COUNT; c++)
						if (!strcmp(cell[i], col_name[c]))
							map[c] = (int)i;
				have_header = true;
			} else {
				parse_row(cell, n, map);
			}
		}
		p = eol + 1;
	}
}

size_t
gpu_specs(const struct gpu_spec **out)
{
	pthread_once(&table_once, parse_table);
	*out = table;
	return table_nr;
}

/* ---- names as tokens ---- */

#define TOK_MAX 16
#define TOK_LEN 32

struct toks {
	size_t n;
	char t[TOK_MAX][TOK_LEN];
};

static const char *const stopwords[] = {
	"nvidia",   "amd",   "ati",    "intel",    "huawei", "geforce", "radeon",
	"instinct", "tesla", "quadro", "graphics", "r",      "tm",
};

static bool
is_stopword(const char *t)
{
	for (size_t i = 0; i < ARRAY_SIZE(stopwords); i++)
		if (!strcmp(t, stopwords[i]))
			return true;
	return false;
}

/*
 * Split len bytes of s into lower-case tokens of letters and digits; a '.'
 * between two digits stays ("1.5"). Anything else separates, non-ASCII
 * bytes ("®") included.
 */
static void
tokenize(const char *s, size_t len, struct toks *out)
{
	size_t i = 0;

	out->n = 0;
	while (i < len && out->n < TOK_MAX) {
		char *t = out->t[out->n];
		size_t k = 0;

		while (i < len && !isalnum((unsigned char)s[i]))
			i++;
		while (i < len && (isalnum((unsigned char)s[i]) ||
		                   (s[i] == '.' && i && isdigit((unsigned char)s[i - 1]) &&
		                    i + 1 < len && isdigit((unsigned char)s[i + 1])))) {
			if (k + 1 < TOK_LEN)
				t[k++] = (char)tolower((unsigned char)s[i]);
			i++;
		}
		t[k] = '\0';
		if (k && !is_stopword(t))
			out->n++;
	}
}

static bool
has_tok(const struct toks *t, const char *w)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->t[i], w))
			return true;
	return false;
}

/* The tokens run together: "h100sxm580gb". */
static void
compact(const struct toks *t, char *buf, size_t size)
{
	size_t at = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < t->n && at + 1 < size; i++)
		at += (size_t)snprintf(buf + at, size - at, "%s", t->t[i]);
	if (at >= size)
		buf[size - 1] = '\0';
}

/* "80gb" -> 80, "1.5gb" -> 1.5; -1 when t is no memory size. */
static double
mem_token(const char *t)
{
	char *end;
	double v;

	if (!isdigit((unsigned char)*t))
		return -1;
	v = strtod(t, &end);
	return !strcmp(end, "gb") ? v : -1;
}

static bool
mem_token_fits(double gb, const struct gpu_spec *r)
{
	return !isnan(r->mem_gib) && fabs(gb - r->mem_gib) <= fmax(1.0, 0.03 * r->mem_gib);
}

/*
 * Names of row r: i = 0 is the table's name, 1.. its aliases. False when
 * there is no name i.
 */
static bool
row_name(const struct gpu_spec *r, size_t i, const char **s, size_t *len)
{
	const char *p = r->aliases;

	if (i == 0) {
		*s = r->name;
		*len = strlen(r->name);
		return true;
	}
	for (size_t k = 1; *p; k++) {
		const char *bar = strchr(p, '|');
		size_t n = bar ? (size_t)(bar - p) : strlen(p);

		if (k == i) {
			*s = p;
			*len = n;
			return true;
		}
		if (!bar)
			break;
		p = bar + 1;
	}
	return false;
}

/* ---- matching a device ---- */

enum name_fit {
	FIT_NONE,
	FIT_WEAK, /* the names agree, but the row's name says a memory size the device's does not */
	FIT_STRONG, /* the names agree token for token */
};

/*
 * How the device's name (tokens dev) fits one of row r's names: every
 * token of that name must be in dev's, except a memory size; every token
 * of dev's must be in that name, or be r's memory size or memory type.
 */
static enum name_fit
name_fit(const struct toks *dev, const struct gpu_spec *r)
{
	enum name_fit best = FIT_NONE;
	const char *s;
	size_t len;

	if (!dev->n)
		return FIT_NONE;
	for (size_t i = 0; row_name(r, i, &s, &len); i++) {
		struct toks c;
		bool fit = true, missing_mem = false;

		tokenize(s, len, &c);
		if (!c.n)
			continue;
		for (size_t k = 0; k < c.n && fit; k++) {
			if (has_tok(dev, c.t[k]))
				continue;
			if (mem_token(c.t[k]) >= 0)
				missing_mem = true;
			else
				fit = false;
		}
		for (size_t k = 0; k < dev->n && fit; k++) {
			double gb = mem_token(dev->t[k]);

			if (has_tok(&c, dev->t[k]))
				continue;
			if (gb >= 0 && mem_token_fits(gb, r))
				continue;
			if (*r->mem_type && !strcasecmp(dev->t[k], r->mem_type))
				continue;
			fit = false;
		}
		if (fit && (missing_mem ? FIT_WEAK : FIT_STRONG) > best)
			best = missing_mem ? FIT_WEAK : FIT_STRONG;
	}
	return best;
}

/*
 * Whether the device's memory agrees with the row's: 1 yes, 0 no, -1 not
 * known. Drivers report the size as sold (GiB) less a reserve: 0 to 0.5 %,
 * or a sixteenth with ECC on GDDR6 (an L40S shows 0.937 of its 48 GiB).
 * 0.93-1.05 of the size as sold keeps a 20 GB board from passing for a
 * 24 GB one, and a 16 GB one for a 15 GB one.
 */
static int
mem_fit(const struct gpu_device *d, const struct gpu_spec *r)
{
	double ratio;

	if (!dev_has(d, GF_MEM_TOTAL) || !(d->v[GF_MEM_TOTAL] > 0) || isnan(r->mem_gib) ||
	    r->mem_gib <= 0)
		return -1;
	ratio = d->v[GF_MEM_TOTAL] / (r->mem_gib * GIB);
	return ratio >= 0.93 && ratio <= 1.05;
}

/*
 * Whether the device can be row r: a strong name fit is enough (the names
 * agree; memory is left alone, as an MI250X shows half its board's); a
 * weak one needs memory that does not disagree; no fit needs memory that
 * agrees (allowed only among the rows of the device's PCI id).
 */
static bool
dev_fits(const struct gpu_device *d, const struct toks *dev, const struct gpu_spec *r, bool by_pci,
         enum name_fit *how)
{
	int mem = mem_fit(d, r);

	*how = name_fit(dev, r);
	switch (*how) {
	case FIT_STRONG:
		return true;
	case FIT_WEAK:
		return mem != 0;
	case FIT_NONE:
		return by_pci && mem == 1;
	}
	return false;
}

/* The one row of cand[] (n of them) that d fits, preferring strong name fits. */
static const struct gpu_spec *
pick(const struct gpu_device *d, const struct toks *dev, const struct gpu_spec **cand, size_t n,
     bool by_pci)
{
	const struct gpu_spec *found[2][2] = { { NULL } }; /* [strong?][first, second] */
	size_t nr[2] = { 0, 0 };

	for (size_t i = 0; i < n; i++) {
		enum name_fit how;
		int s;

		if (!dev_fits(d, dev, cand[i], by_pci, &how))
			continue;
		s = how == FIT_STRONG;
		if (nr[s] < 2)
			found[s][nr[s]] = cand[i];
		nr[s]++;
	}
	if (nr[1])
		return nr[1] == 1 ? found[1][0] : NULL;
	return nr[0] == 1 ? found[0][0] : NULL;
}

const struct gpu_spec *
gpu_spec_match(const struct gpu_device *d)
{
	const struct gpu_spec *t, **cand;
	size_t n = gpu_specs(&t), nr_cand = 0;
	const struct gpu_spec *r = NULL;
	bool shared = false;
	struct toks dev;

	if (!d || !n)
		return NULL;
	tokenize(d->name, strnlen(d->name, sizeof(d->name)), &dev);
	cand = xcalloc(n, sizeof(*cand));
	if (d->pci_device_id) {
		for (size_t i = 0; i < n; i++)
			for (size_t k = 0; k < ARRAY_SIZE(t[i].pci_id); k++)
				if (t[i].pci_id[k] && t[i].pci_id[k] == d->pci_device_id) {
					cand[nr_cand++] = &t[i];
					shared |= (table_shared[i] >> k) & 1;
					break;
				}
	}
	if (nr_cand == 1 && !shared) {
		r = cand[0];
	} else if (nr_cand) {
		/* an id of several SKUs: the row must agree with the name or memory */
		r = pick(d, &dev, cand, nr_cand, true);
	} else {
		for (size_t i = 0; i < n; i++)
			cand[i] = &t[i];
		r = pick(d, &dev, cand, n, false);
	}
	free(cand);
	return r;
}

/* ---- finding a typed name ---- */

/*
 * How close typed (compacted) is to cand: the edit distance when small for
 * typed's length, or when one holds the other ("rtx4080super" and
 * "rtx4080"); SIZE_MAX when not close.
 */
static size_t
closeness(const char *typed, const char *cand)
{
	size_t lt = strlen(typed), lc = strlen(cand), d;
	size_t limit = lt <= 4 ? 1 : lt <= 8 ? 2 : 3;

	if (!lc)
		return SIZE_MAX;
	d = str_distance(typed, cand);
	if (d <= limit)
		return d;
	if ((lt >= 3 && lc >= 3) && (strstr(typed, cand) || strstr(cand, typed)))
		return d;
	return SIZE_MAX;
}

/* The closest any of row r's names, or its model tokens ("h100"), is to typed. */
static size_t
row_closeness(const struct gpu_spec *r, const char *typed)
{
	size_t best = SIZE_MAX;
	const char *s;
	size_t len;

	for (size_t i = 0; row_name(r, i, &s, &len); i++) {
		struct toks c;
		char buf[TOK_MAX * TOK_LEN];
		size_t d;

		tokenize(s, len, &c);
		compact(&c, buf, sizeof(buf));
		d = closeness(typed, buf);
		if (d < best)
			best = d;
		for (size_t k = 0; k < c.n; k++) {
			if (strlen(c.t[k]) < 3 || !strpbrk(c.t[k], "0123456789"))
				continue;
			d = closeness(typed, c.t[k]);
			if (d < best)
				best = d;
		}
	}
	return best;
}

/* Every token of a row: its names', its architecture's and its memory type's. */
static void
row_tokens(const struct gpu_spec *r, struct toks *all)
{
	const char *s;
	size_t len;

	all->n = 0;
	for (size_t i = 0; row_name(r, i, &s, &len); i++) {
		struct toks c;

		tokenize(s, len, &c);
		for (size_t k = 0; k < c.n && all->n < TOK_MAX; k++)
			if (!has_tok(all, c.t[k]))
				memcpy(all->t[all->n++], c.t[k], TOK_LEN);
	}
	for (int k = 0; k < 2; k++) {
		struct toks c;
		const char *w = k ? r->mem_type : r->arch;

		tokenize(w, strlen(w), &c);
		for (size_t j = 0; j < c.n && all->n < TOK_MAX; j++)
			if (!has_tok(all, c.t[j]))
				memcpy(all->t[all->n++], c.t[j], TOK_LEN);
	}
}

/*
 * Whether every typed token is one of row r's tokens (2), or at least the
 * start of one (1); 0 when some token is neither. A memory size counts as
 * r's when it is r's size.
 */
static int
tokens_fit(const struct toks *q, const struct gpu_spec *r)
{
	struct toks all;
	int fit = 2;

	row_tokens(r, &all);
	for (size_t i = 0; i < q->n; i++) {
		double gb = mem_token(q->t[i]);
		size_t lq = strlen(q->t[i]);
		bool prefix = false;

		if (has_tok(&all, q->t[i]) || (gb >= 0 && mem_token_fits(gb, r)))
			continue;
		for (size_t k = 0; k < all.n && !prefix; k++)
			prefix = lq >= 2 && !strncmp(all.t[k], q->t[i], lq);
		if (!prefix)
			return 0;
		fit = 1;
	}
	return fit;
}

const struct gpu_spec *
gpu_spec_find(const char *name, const struct gpu_spec **close, size_t max, size_t *nr_close)
{
	const struct gpu_spec *t;
	size_t n = gpu_specs(&t), nr = 0, *score;
	char typed[TOK_MAX * TOK_LEN];
	struct toks q;
	int *fit, want = 0;
	const struct gpu_spec *found = NULL;

	*nr_close = 0;
	if (!name || !n)
		return NULL;
	tokenize(name, strlen(name), &q);
	if (!q.n)
		return NULL;
	compact(&q, typed, sizeof(typed));
	fit = xcalloc(n, sizeof(*fit));
	score = xcalloc(n, sizeof(*score));

	/* 1: a name or alias equal to it ("h200" is the "NVIDIA H200" alias) */
	for (size_t i = 0; i < n; i++) {
		const char *s;
		size_t len;

		for (size_t k = 0; row_name(&t[i], k, &s, &len) && !fit[i]; k++) {
			struct toks c;
			char buf[TOK_MAX * TOK_LEN];

			tokenize(s, len, &c);
			compact(&c, buf, sizeof(buf));
			fit[i] = !strcmp(buf, typed) ? 3 : 0;
		}
		if (fit[i] > want)
			want = fit[i];
	}
	/* 2: every typed token among the row's, whole, else as a prefix ("h100 sxm") */
	if (!want)
		for (size_t i = 0; i < n; i++) {
			fit[i] = tokens_fit(&q, &t[i]);
			if (fit[i] > want)
				want = fit[i];
		}
	if (want) {
		for (size_t i = 0; i < n; i++) {
			if (fit[i] != want)
				continue;
			found = nr ? NULL : &t[i];
			if (nr < max && close)
				close[nr] = &t[i];
			nr++;
		}
		if (nr == 1) {
			free(fit);
			free(score);
			return found;
		}
		*nr_close = nr < max ? nr : max;
		free(fit);
		free(score);
		return NULL;
	}

	/* 3: none; the close ones, nearest first, in table order among equals */
	for (size_t i = 0; i < n; i++)
		score[i] = row_closeness(&t[i], typed);
	while (*nr_close < max && close) {
		size_t best = SIZE_MAX, at = 0;

		for (size_t i = 0; i < n; i++)
			if (score[i] < best) {
				best = score[i];
				at = i;
			}
		if (best == SIZE_MAX)
			break;
		close[(*nr_close)++] = &t[at];
		score[at] = SIZE_MAX;
	}
	free(fit);
	free(score);
	return NULL;
}

/* ---- memory a program can allocate ---- */

/*
 * PyTorch's CUDA context: "around 400MB if CUDA >= 11.7 is used and lazy
 * module loading enabled (default in PyTorch)" (ptrblck, pytorch/pytorch
 * #109888, 2023-09-23; ~300 MB in #107667, more than 1000 MB before
 * CUDA 11.7 loaded every kernel). nvidia-smi counts it as used, apart from
 * the driver's "Reserved".
 */
#define CONTEXT_BYTES (400 * MIB)

double
gpu_spec_sold_reserve(const struct gpu_spec *g)
{
	if (!g || !(g->mem_gib > 0) || !isfinite(g->mem_bytes))
		return NAN;
	return g->mem_measured ? g->mem_gib * GIB - g->mem_bytes : sold_reserve_rule(g);
}

/*
 * NVML's "Reserved" for an NVIDIA total without a capture: 396 MiB and
 * 1.56 MiB per GiB, the line through the RTX 2080 SUPER (408 MiB of 8192)
 * and the H200 (614 of 143771), which the H100 (479 of 81559, rule 520)
 * and RTX 4080 SUPER (434 of 16376, rule 421) follow within 9 %; the
 * L40S (609 of 46068, rule 466) reserves more. Other vendors' drivers
 * report what they keep inside the total they show: nothing; nor is
 * anything taken off a spec built without a vendor.
 */
static double
reserved_rule(double total, const struct gpu_spec *g)
{
	if (g && (!g->vendor || strcmp(g->vendor, "NVIDIA")))
		return 0;
	return round(396 + 1.56 * (total / GIB)) * MIB;
}

double
gpu_spec_reserved_bytes(const struct gpu_spec *g)
{
	if (!g || !isfinite(g->mem_bytes))
		return NAN;
	return isfinite(g->reserved_bytes) ? g->reserved_bytes : reserved_rule(g->mem_bytes, g);
}

double
gpu_spec_cuda_total_bytes(const struct gpu_spec *g)
{
	double r = gpu_spec_reserved_bytes(g);

	return isfinite(r) ? g->mem_bytes - r : NAN;
}

double
gpu_spec_context_bytes(const struct gpu_spec *g)
{
	(void)g;
	return CONTEXT_BYTES;
}

double
gpu_spec_usable_bytes(const struct gpu_spec *g)
{
	double t = gpu_spec_cuda_total_bytes(g);

	return isfinite(t) ? fmax(0, t - gpu_spec_context_bytes(g)) : NAN;
}

double
gpu_usable_from_total(double total_bytes, const struct gpu_spec *g)
{
	double r;

	if (!(total_bytes > 0) || !isfinite(total_bytes))
		return NAN;
	/* a capture's reserve is of that card; another size (MIG, a variant) takes the rule */
	if (g && isfinite(g->reserved_bytes) && g->mem_measured &&
	    fabs(total_bytes - g->mem_bytes) < 64 * MIB)
		r = g->reserved_bytes;
	else
		r = reserved_rule(total_bytes, g);
	return fmax(0, total_bytes - r - gpu_spec_context_bytes(g));
}
