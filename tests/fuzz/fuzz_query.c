/*
 * libFuzzer target: nvidia-smi's --query-gpu / --query-compute-apps and
 * --format parsing, then the CSV writer.
 *
 * Input: one flags byte (bit 0: --query-compute-apps, else --query-gpu;
 * bit 1: fill the snapshot with extreme numbers: NaN, infinities,
 * negatives, 2^64 and beyond), then the field list, then after the first
 * newline the --format value ("csv" when there is no newline).
 *
 * Checked: query_add_fields() takes exactly the non-blank comma-separated
 * items, each as query_field_lookup() names it, or fails with E_USAGE, a
 * message and q unchanged; query_parse_format() accepts exactly
 * csv/noheader/nounits lists that say csv and leaves fmt alone otherwise.
 * On success query_print() on a small hand-made snapshot gives the header
 * (unless noheader) and one line per device or listed process, each with
 * one ", "-separated column per field, each column the field's value as
 * query_value() spells it, with its unit unless nounits.
 */
#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/err.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "front/query.h"
#include "fuzz.h"

#define MIB 1048576.0

int LLVMFuzzerInitialize(int *argc, char ***argv);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* the timestamp column is local time: make it the same everywhere, and cheap */
	setenv("TZ", "UTC", 1);
	return 0;
}

static void
copy(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src);
}

static struct gpu_proc *
add_proc(struct gpu_snapshot *s, unsigned dev, uint32_t pid, unsigned type, double mem,
         const char *name, const char *cmdline)
{
	struct gpu_proc *p = gpu_snapshot_add_proc(s);

	p->dev = dev;
	p->pid = pid;
	p->type = type;
	if (mem >= 0)
		proc_set(p, PF_GPU_MEM, mem);
	p->name = name ? strdup(name) : NULL;
	p->cmdline = cmdline ? strdup(cmdline) : NULL;
	return p;
}

/* Two GPUs (one working, one lost) and processes of every kind query_print() sorts out. */
static void
make_snapshot(struct gpu_snapshot *s)
{
	struct gpu_device *d;

	gpu_snapshot_init(s);
	s->time = 1784016773.353;
	copy(s->hostname, sizeof(s->hostname), "gpu-node-07");
	copy(s->nvidia.driver_version, sizeof(s->nvidia.driver_version), "590.48.01");

	d = gpu_snapshot_add_dev(s);
	d->vendor = VENDOR_NVIDIA;
	copy(d->name, sizeof(d->name), "NVIDIA H100 80GB HBM3");
	copy(d->serial, sizeof(d->serial), "1654922012345");
	copy(d->uuid, sizeof(d->uuid), "GPU-4c2c8a36-0f4e-8d4a-1b1e-5d9c3a7b2e10");
	copy(d->pci_bus_id, sizeof(d->pci_bus_id), "00000000:00:09.0");
	copy(d->vbios, sizeof(d->vbios), "96.00.A5.00.01");
	copy(d->inforom, sizeof(d->inforom), "G520.0200.00.05");
	copy(d->compute_cap, sizeof(d->compute_cap), "9.0");
	d->pci_valid = true;
	d->pci_dev = 9;
	d->pci_device_id = 0x233010DE;
	d->pci_subsys_id = 0x16C110DE;
	dev_set(d, GF_PCIE_GEN, 5);
	dev_set(d, GF_PCIE_WIDTH, 16);
	dev_set(d, GF_PERSISTENCE, 1);
	dev_set(d, GF_PSTATE, 0);
	dev_set(d, GF_CLOCK_REASONS_SUPPORTED, 0x1FF);
	dev_set(d, GF_CLOCK_REASONS, 0x5);
	dev_set(d, GF_MEM_TOTAL, 81559 * MIB + 1048575);
	dev_set(d, GF_MEM_USED, 19818 * MIB + 12345);
	dev_set(d, GF_MEM_FREE, 61263 * MIB);
	dev_set(d, GF_COMPUTE_MODE, CM_EXCLUSIVE_PROCESS);
	dev_set(d, GF_UTIL_GPU, 100);
	dev_set(d, GF_ECC_MODE, 1);
	dev_set(d, GF_RETIRED_PENDING, 0);
	dev_set(d, GF_TEMP_GPU, 59);
	dev_set(d, GF_POWER_DRAW, 631950 * 1e-3);
	dev_set(d, GF_POWER_LIMIT, 700000 * 1e-3);
	dev_set(d, GF_CLOCK_SM, 1980);
	dev_set(d, GF_MIG_MODE, 0);

	d = gpu_snapshot_add_dev(s);
	d->index = 1;
	d->vendor = VENDOR_NVIDIA;
	d->state = DEV_LOST;
	copy(d->state_msg, sizeof(d->state_msg), "GPU is lost");
	copy(d->pci_bus_id, sizeof(d->pci_bus_id), "00000000:00:0A.0");

	add_proc(s, 0, 4242, PROC_COMPUTE, 15690 * MIB, "python3",
	         "/usr/bin/python3 -m vllm.entrypoints.openai.api_server");
	add_proc(s, 0, 4243, PROC_GRAPHICS, 12 * MIB, "Xorg",
	         "/usr/lib/xorg/Xorg");                                    /* not listed */
	add_proc(s, 1, 4244, PROC_MPS, -1, "worker\t1", NULL);             /* lost GPU */
	add_proc(s, 0, 4245, PROC_COMPUTE | PROC_GRAPHICS, 0, NULL, NULL); /* no names */
	add_proc(s, 7, 4246, PROC_COMPUTE, 1 * MIB, "ghost", "ghost");     /* bad dev */
}

/* A deterministic stream of numbers from the input. */
struct rng {
	uint64_t s;
};

static uint64_t
rng_next(struct rng *r)
{
	r->s ^= r->s << 13;
	r->s ^= r->s >> 7;
	r->s ^= r->s << 17;
	return r->s;
}

static double
wild_value(struct rng *r)
{
	static const double special[] = {
		0.0,          -0.0,   1.0,          -1.0,   0.5,   15.0,     15.5,
		16.0,         3.0,    4.0,          -2.5,   255.0, 65535.0,  1e9,
		4294967296.0, 9.2e18, 1.8e19,       1.9e19, 1e30,  -1e30,    1e300,
		-1e300,       5e-324, 2147483648.0, NAN,    -NAN,  INFINITY, -INFINITY,
	};
	uint64_t x = rng_next(r);

	if (x % 4 == 0) {
		double v;

		x = rng_next(r);
		memcpy(&v, &x, sizeof(v)); /* any bit pattern */
		return v;
	}
	return special[(x >> 8) % (sizeof(special) / sizeof(special[0]))];
}

/* Replace the numbers of the snapshot by extreme ones, set or unset at random. */
static void
wild_snapshot(struct gpu_snapshot *s, const uint8_t *data, size_t size)
{
	struct rng r = { 0x9E3779B97F4A7C15ull };

	for (size_t i = 0; i < size; i++)
		r.s = (r.s ^ data[i]) * 0x100000001B3ull;
	if (!r.s)
		r.s = 1;
	s->time = rng_next(&r) % 2 ? wild_value(&r) : s->time;
	for (size_t i = 0; i < s->nr_dev; i++) {
		struct gpu_device *d = &s->dev[i];

		for (int f = 0; f < GF__COUNT; f++) {
			if (rng_next(&r) % 3)
				dev_set(d, (enum gpu_field)f, wild_value(&r));
			else
				dev_unset(d, (enum gpu_field)f);
		}
		d->pci_domain = (unsigned)rng_next(&r);
		d->pci_bus = (unsigned)rng_next(&r);
	}
	for (size_t i = 0; i < s->nr_proc; i++)
		proc_set(&s->proc[i], PF_GPU_MEM, wild_value(&r));
}

/* The non-blank items of a comma-separated list, trimmed, in order. */
static size_t
list_items(const char *list, char ***items)
{
	size_t n = 0;
	const char *p = list;

	*items = NULL;
	while (*p) {
		size_t len = strcspn(p, ",");
		const char *s = p, *e = p + len;

		p = *e ? e + 1 : e;
		while (s < e && isspace((unsigned char)*s))
			s++;
		while (e > s && isspace((unsigned char)e[-1]))
			e--;
		if (s == e)
			continue;
		*items = realloc(*items, (n + 1) * sizeof(**items));
		if (!*items)
			abort();
		(*items)[n++] = strndup(s, (size_t)(e - s));
	}
	return n;
}

static void
free_items(char **items, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(items[i]);
	free(items);
}

static void
check_fields(struct query *q, const char *list)
{
	struct err err = ERR_INIT;
	char **items;
	size_t n = list_items(list, &items), i;
	bool all_known = true;
	int rc;

	for (i = 0; i < n; i++)
		all_known &= query_field_lookup(q->kind, items[i]) >= 0;
	rc = query_add_fields(q, list, &err);
	if (rc) {
		FUZZ_CHECK(rc == E_USAGE && err.code == E_USAGE, "query_add_fields returned %d",
		           rc);
		FUZZ_CHECK(err.msg[0] && strnlen(err.msg, sizeof(err.msg)) < sizeof(err.msg),
		           "query_add_fields failed without a message");
		FUZZ_CHECK(q->nr == 0, "q holds %zu fields after an error", q->nr);
		FUZZ_CHECK(!n || !all_known, "'%s' failed (%s) but every item is a field", list,
		           err.msg);
	} else {
		FUZZ_CHECK(n && all_known, "'%s' accepted with %zu items, not all fields", list, n);
		FUZZ_CHECK(q->nr == n, "'%s': %zu fields for %zu items", list, q->nr, n);
		for (i = 0; i < n; i++) {
			FUZZ_CHECK(q->field[i] < query_field_count(q->kind),
			           "field id %u out of range", q->field[i]);
			FUZZ_CHECK((int)q->field[i] == query_field_lookup(q->kind, items[i]),
			           "item '%s' became field %u", items[i], q->field[i]);
		}
	}
	free_items(items, n);
}

static int
check_format(struct query_format *fmt, const char *spec)
{
	struct err err = ERR_INIT;
	struct query_format want = { false, false };
	char **items;
	size_t n = list_items(spec, &items);
	bool csv = false, good = true;
	int rc;

	for (size_t i = 0; i < n; i++) {
		if (!strcasecmp(items[i], "csv"))
			csv = true;
		else if (!strcasecmp(items[i], "noheader"))
			want.noheader = true;
		else if (!strcasecmp(items[i], "nounits"))
			want.nounits = true;
		else
			good = false;
	}
	free_items(items, n);
	fmt->noheader = true; /* must be left alone on error */
	fmt->nounits = true;
	rc = query_parse_format(fmt, spec, &err);
	if (rc) {
		FUZZ_CHECK(rc == E_USAGE && err.msg[0], "query_parse_format returned %d", rc);
		FUZZ_CHECK(!(csv && good), "format '%s' refused: %s", spec, err.msg);
		FUZZ_CHECK(fmt->noheader && fmt->nounits, "fmt changed on error");
	} else {
		FUZZ_CHECK(csv && good, "format '%s' accepted", spec);
		FUZZ_CHECK(fmt->noheader == want.noheader && fmt->nounits == want.nounits,
		           "format '%s' parsed as noheader=%d nounits=%d", spec, fmt->noheader,
		           fmt->nounits);
	}
	return rc;
}

static bool
ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n >= k && !memcmp(s + n - k, suffix, k);
}

/* One output line (without its newline): its columns against the fields of q. */
static void
check_line(const struct query *q, const struct gpu_snapshot *snap, const char *line, size_t len,
           bool header, size_t row)
{
	const char *p = line, *end = line + len;
	struct strbuf want = STRBUF_INIT;

	for (size_t i = 0; i < q->nr; i++) {
		const char *sep = NULL, *cend;
		const char *unit = query_field_unit(q->kind, q->field[i]);

		for (const char *s = p; s + 1 < end; s++) {
			if (s[0] == ',' && s[1] == ' ') {
				sep = s;
				break;
			}
		}
		if (i + 1 < q->nr) {
			if (!sep)
				fuzz_dump("line", line, len);
			FUZZ_CHECK(sep, "%s line has %zu columns, not %zu",
			           header ? "header" : "value", i + 1, q->nr);
			cend = sep;
		} else {
			if (sep)
				fuzz_dump("line", line, len);
			FUZZ_CHECK(!sep, "%s line has more than %zu columns",
			           header ? "header" : "value", q->nr);
			cend = end;
		}
		strbuf_reset(&want);
		if (header) {
			strbuf_addstr(&want, query_field_name(q->kind, q->field[i]));
			if (unit)
				strbuf_addf(&want, " [%s]", unit);
		} else {
			query_value(q->kind, q->field[i], snap, row, q->fmt.nounits, &want);
		}
		FUZZ_CHECK((size_t)(cend - p) == want.len && !memcmp(p, want.buf, want.len),
		           "column %zu is '%.*s', not '%s'", i, (int)(cend - p), p, want.buf);
		if (!header && unit) {
			char suffix[16];

			snprintf(suffix, sizeof(suffix), " %s", unit);
			if (q->fmt.nounits)
				FUZZ_CHECK(!ends_with(p, (size_t)(cend - p), suffix),
				           "nounits, but column %zu is '%.*s'", i, (int)(cend - p),
				           p);
			else if (*p != '[' && !ends_with(p, (size_t)(cend - p), "N/A"))
				FUZZ_CHECK(ends_with(p, (size_t)(cend - p), suffix),
				           "column %zu '%.*s' lacks its unit", i, (int)(cend - p),
				           p);
		}
		p = cend + 2;
	}
	strbuf_release(&want);
}

static void
check_print(const struct query *q, const struct gpu_snapshot *snap)
{
	struct strbuf out = STRBUF_INIT;
	size_t rows[16], nr_rows = 0, line = 0;
	const char *p, *end;

	if (q->kind == QUERY_GPU) {
		for (size_t i = 0; i < snap->nr_dev; i++)
			rows[nr_rows++] = i;
	} else {
		for (size_t i = 0; i < snap->nr_proc; i++) {
			const struct gpu_proc *pr = &snap->proc[i];

			if ((pr->type & (PROC_COMPUTE | PROC_MPS)) && pr->dev < snap->nr_dev)
				rows[nr_rows++] = i;
		}
	}
	strbuf_addstr(&out, "x"); /* query_print appends */
	query_print(q, snap, &out);
	FUZZ_CHECK(out.buf[0] == 'x', "query_print changed what it appends to");
	FUZZ_CHECK(strlen(out.buf) == out.len, "query_print output holds a NUL");
	FUZZ_CHECK(out.len > 1 && out.buf[out.len - 1] == '\n', "output does not end in a newline");
	p = out.buf + 1;
	end = out.buf + out.len;
	for (; p < end; line++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		bool header = !q->fmt.noheader && line == 0;
		size_t row = line - !q->fmt.noheader;

		FUZZ_CHECK(header || row < nr_rows, "more lines than the %zu rows", nr_rows);
		check_line(q, snap, p, (size_t)(nl - p), header, header ? 0 : rows[row]);
		p = nl + 1;
	}
	FUZZ_CHECK(line == nr_rows + !q->fmt.noheader, "%zu lines for %zu rows", line, nr_rows);
	strbuf_release(&out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct query q;
	struct gpu_snapshot snap;
	char *text, *nl;
	const char *spec = "csv";
	unsigned flags;

	if (!size)
		return 0;
	flags = data[0];
	text = fuzz_cstr(data + 1, size - 1);
	nl = strchr(text, '\n');
	if (nl) {
		*nl = '\0';
		spec = nl + 1;
	}
	query_init(&q, flags & 1 ? QUERY_APPS : QUERY_GPU);
	check_fields(&q, text);
	if (check_format(&q.fmt, spec) == 0 && q.nr) {
		make_snapshot(&snap);
		if (flags & 2)
			wild_snapshot(&snap, data, size);
		check_print(&q, &snap);
		gpu_snapshot_release(&snap);
	}
	query_release(&q);
	free(text);
	return 0;
}
