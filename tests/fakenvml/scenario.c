/*
 * Scenario files (docs/scenario-format.md): a line-based INI dialect read
 * once at nvmlInit into an immutable struct scenario, and the evaluation of
 * its value expressions over scenario time.
 */
#include "fake.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Every allocation of a scenario is carved from one of these, so one walk
 * frees it all. A scenario makes thousands of small ones (an expression per
 * value), so blocks hold many: SC_BLOCK bytes, or one larger allocation.
 */
struct scenario_block {
	struct scenario_block *next;
	size_t used, size; /* bytes of data taken, and there are */
	max_align_t data[];
};

#define SC_BLOCK (16 * 1024)

static const char *const gpu_num_keys[GK__COUNT] = {
	[GK_BRAND] = "brand",
	[GK_ARCHITECTURE] = "architecture",
	[GK_MINOR_NUMBER] = "minor_number",
	[GK_TEMPERATURE] = "temperature",
	[GK_MEMORY_TEMPERATURE] = "memory_temperature",
	[GK_TEMP_SHUTDOWN] = "temp_shutdown",
	[GK_TEMP_SLOWDOWN] = "temp_slowdown",
	[GK_TEMP_MEM_MAX] = "temp_mem_max",
	[GK_TEMP_GPU_MAX] = "temp_gpu_max",
	[GK_TEMP_MARGIN] = "temp_margin",
	[GK_NUM_FANS] = "num_fans",
	[GK_FAN_SPEED] = "fan_speed",
	[GK_POWER_USAGE] = "power_usage",
	[GK_POWER_INSTANT] = "power_instant",
	[GK_POWER_LIMIT_ENFORCED] = "power_limit_enforced",
	[GK_POWER_LIMIT] = "power_limit",
	[GK_POWER_LIMIT_DEFAULT] = "power_limit_default",
	[GK_POWER_LIMIT_MIN] = "power_limit_min",
	[GK_POWER_LIMIT_MAX] = "power_limit_max",
	[GK_ENERGY] = "energy",
	[GK_MEMORY_TOTAL] = "memory_total",
	[GK_MEMORY_RESERVED] = "memory_reserved",
	[GK_MEMORY_USED] = "memory_used",
	[GK_BAR1_TOTAL] = "bar1_total",
	[GK_BAR1_USED] = "bar1_used",
	[GK_UTIL_GPU] = "util_gpu",
	[GK_UTIL_MEMORY] = "util_memory",
	[GK_UTIL_ENCODER] = "util_encoder",
	[GK_UTIL_DECODER] = "util_decoder",
	[GK_UTIL_JPEG] = "util_jpeg",
	[GK_UTIL_OFA] = "util_ofa",
	[GK_CLOCK_GRAPHICS] = "clock_graphics",
	[GK_CLOCK_SM] = "clock_sm",
	[GK_CLOCK_MEM] = "clock_mem",
	[GK_CLOCK_VIDEO] = "clock_video",
	[GK_MAX_CLOCK_GRAPHICS] = "max_clock_graphics",
	[GK_MAX_CLOCK_SM] = "max_clock_sm",
	[GK_MAX_CLOCK_MEM] = "max_clock_mem",
	[GK_MAX_CLOCK_VIDEO] = "max_clock_video",
	[GK_PSTATE] = "pstate",
	[GK_CLOCKS_EVENT_REASONS] = "clocks_event_reasons",
	[GK_CLOCKS_EVENT_REASONS_SUPPORTED] = "clocks_event_reasons_supported",
	[GK_PCIE_GEN] = "pcie_gen",
	[GK_PCIE_GEN_MAX] = "pcie_gen_max",
	[GK_PCIE_GEN_GPU_MAX] = "pcie_gen_gpu_max",
	[GK_PCIE_WIDTH] = "pcie_width",
	[GK_PCIE_WIDTH_MAX] = "pcie_width_max",
	[GK_PCIE_REPLAY] = "pcie_replay",
	[GK_PCIE_TX] = "pcie_tx",
	[GK_PCIE_RX] = "pcie_rx",
	[GK_PERSISTENCE_MODE] = "persistence_mode",
	[GK_COMPUTE_MODE] = "compute_mode",
	[GK_DISPLAY_MODE] = "display_mode",
	[GK_DISPLAY_ACTIVE] = "display_active",
	[GK_MIG_MODE] = "mig_mode",
	[GK_MIG_MODE_PENDING] = "mig_mode_pending",
	[GK_ECC_MODE] = "ecc_mode",
	[GK_ECC_MODE_PENDING] = "ecc_mode_pending",
	[GK_ECC_CORRECTED_VOLATILE] = "ecc_corrected_volatile",
	[GK_ECC_UNCORRECTED_VOLATILE] = "ecc_uncorrected_volatile",
	[GK_ECC_CORRECTED_AGGREGATE] = "ecc_corrected_aggregate",
	[GK_ECC_UNCORRECTED_AGGREGATE] = "ecc_uncorrected_aggregate",
	[GK_RETIRED_SBE] = "retired_sbe",
	[GK_RETIRED_DBE] = "retired_dbe",
	[GK_RETIRED_PENDING] = "retired_pending",
	[GK_REMAPPED_CORR] = "remapped_corr",
	[GK_REMAPPED_UNCORR] = "remapped_uncorr",
	[GK_REMAPPED_PENDING] = "remapped_pending",
	[GK_REMAPPED_FAILURE] = "remapped_failure",
	[GK_ENCODER_SESSIONS] = "encoder_sessions",
	[GK_ENCODER_FPS] = "encoder_fps",
	[GK_ENCODER_LATENCY] = "encoder_latency",
	[GK_POWER_AVERAGE] = "power_average",
	[GK_MEMORY_FREE] = "memory_free",
	[GK_EVENT_TYPES] = "event_types",
	[GK_NVLINK_DOWN] = "nvlink_down",
	[GK_NVLINK_VERSION] = "nvlink_version",
	[GK_NVLINK_REPLAY] = "nvlink_replay",
	[GK_NVLINK_RECOVERY] = "nvlink_recovery",
	[GK_NVLINK_CRC_FLIT] = "nvlink_crc_flit",
	[GK_NVLINK_CRC_DATA] = "nvlink_crc_data",
	[GK_NVLINK_TX] = "nvlink_tx",
	[GK_NVLINK_RX] = "nvlink_rx",
	[GK_VIOL_POWER] = "violation_power",
	[GK_VIOL_THERMAL] = "violation_thermal",
	[GK_VIOL_SYNC_BOOST] = "violation_sync_boost",
	[GK_VIOL_BOARD_LIMIT] = "violation_board_limit",
	[GK_VIOL_LOW_UTIL] = "violation_low_utilization",
	[GK_VIOL_RELIABILITY] = "violation_reliability",
	[GK_VIOL_APP_CLOCKS] = "violation_app_clocks",
	[GK_VIOL_BASE_CLOCKS] = "violation_base_clocks",
	[GK_GPM_SUPPORTED] = "gpm_supported",
	[GK_GPM_GRAPHICS_UTIL] = "gpm_graphics_util",
	[GK_GPM_SM_UTIL] = "gpm_sm_util",
	[GK_GPM_SM_OCCUPANCY] = "gpm_sm_occupancy",
	[GK_GPM_TENSOR_UTIL] = "gpm_tensor_util",
	[GK_GPM_DRAM_BW_UTIL] = "gpm_dram_bw_util",
	[GK_GPM_FP64_UTIL] = "gpm_fp64_util",
	[GK_GPM_FP32_UTIL] = "gpm_fp32_util",
	[GK_GPM_FP16_UTIL] = "gpm_fp16_util",
	[GK_GPM_PCIE_TX] = "gpm_pcie_tx",
	[GK_GPM_PCIE_RX] = "gpm_pcie_rx",
	[GK_GPM_NVLINK_TX] = "gpm_nvlink_tx",
	[GK_GPM_NVLINK_RX] = "gpm_nvlink_rx",
};

static const char *const gpu_str_keys[GS__COUNT] = {
	[GS_NAME] = "name",
	[GS_UUID] = "uuid",
	[GS_SERIAL] = "serial",
	[GS_VBIOS] = "vbios",
	[GS_INFOROM_IMAGE] = "inforom_image",
	[GS_BOARD_PART_NUMBER] = "board_part_number",
};

static const char *const proc_util_keys[PU__COUNT] = {
	[PU_SM] = "sm_util",
	[PU_MEM] = "mem_util",
	[PU_ENC] = "enc_util",
	[PU_DEC] = "dec_util",
};

enum section {
	SEC_NONE,
	SEC_SYSTEM,
	SEC_GPU,
	SEC_PROCESS,
	SEC_MIG,
};

#define MAX_SEEN 128
#define MAX_KEY  40 /* longer than any key: longer ones are unknown anyway */

struct parser {
	struct scenario *sc;
	const char *path;
	unsigned int line;
	enum section sec;
	bool seen_system;
	struct gpu *gpu;
	struct gpu *mig; /* the [mig] section's device, a MIG device of gpu */
	struct proc *proc;
	struct proc **proc_tail;
	/* keys of the current section, to refuse repeats; a hash of each first */
	char seen[MAX_SEEN][MAX_KEY];
	uint32_t seen_hash[MAX_SEEN];
	size_t nr_seen;
};

/* Prints `fake nvml: <file>:<line>: <what>` and returns -1. */
__attribute__((format(printf, 2, 3))) static int
perr(const struct parser *p, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fake nvml: %s:%u: ", p->path, p->line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

/* size zeroed bytes, aligned for any type, that live as long as sc */
static void *
sc_alloc(struct scenario *sc, size_t size)
{
	struct scenario_block *b = sc->blocks;
	size_t align = sizeof(max_align_t), cap;
	void *at;

	if (size > SIZE_MAX - SC_BLOCK)
		return NULL;
	size = (size + align - 1) / align * align;
	if (!b || b->size - b->used < size) {
		cap = size > SC_BLOCK ? size : SC_BLOCK;
		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->used = 0;
		b->size = cap;
		b->next = sc->blocks;
		sc->blocks = b;
	}
	at = (char *)b->data + b->used;
	b->used += size;
	/* zeroed here, not with the block: a scenario takes a part of its last one */
	memset(at, 0, size);
	return at;
}

static const char *
sc_strdup(struct scenario *sc, const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = sc_alloc(sc, n);

	if (d)
		memcpy(d, s, n);
	return d;
}

void
scenario_free(struct scenario *sc)
{
	if (!sc)
		return;
	while (sc->blocks) {
		struct scenario_block *next = sc->blocks->next;

		free(sc->blocks);
		sc->blocks = next;
	}
	free(sc);
}

static char *
trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	return tolower(c) - 'a' + 10;
}

/*
 * A number: decimal or 0x hexadecimal, optionally with a fractional part and
 * (when suffix is set) a KiB/MiB/GiB/TiB suffix, nothing else. Parsed by hand
 * because strtod() follows the locale of the host program, which may use a
 * decimal comma.
 */
static bool
parse_number(const char *s, bool suffix, double *out)
{
	static const struct {
		const char *name;
		double mult;
	} units[] = {
		{ "KiB", 1024.0 },
		{ "MiB", 1048576.0 },
		{ "GiB", 1073741824.0 },
		{ "TiB", 1099511627776.0 },
	};
	const char *p = s;
	bool neg = false, digits = false;
	double v = 0, frac = 0, scale = 1;
	int base = 10;

	if (*p == '-' || *p == '+')
		neg = *p++ == '-';
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	for (; base == 16 ? isxdigit((unsigned char)*p) : isdigit((unsigned char)*p); p++) {
		v = v * base + hexval(*p);
		digits = true;
	}
	if (*p == '.') {
		for (p++; base == 16 ? isxdigit((unsigned char)*p) : isdigit((unsigned char)*p);
		     p++) {
			/* digits past double's precision change nothing */
			if (scale < 1e30) {
				frac = frac * base + hexval(*p);
				scale *= base;
			}
			digits = true;
		}
	}
	if (!digits)
		return false;
	v += frac / scale;
	if (!isfinite(v))
		return false;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p) {
		size_t i;

		for (i = 0; suffix && i < sizeof(units) / sizeof(units[0]); i++)
			if (!strcmp(p, units[i].name))
				break;
		if (!suffix || i == sizeof(units) / sizeof(units[0]))
			return false;
		v *= units[i].mult;
	}
	*out = neg ? -v : v;
	return true;
}

static bool
parse_uint(const char *s, unsigned int *out)
{
	double v;

	if (!parse_number(s, false, &v) || v < 0 || v > UINT_MAX || v != floor(v))
		return false;
	*out = (unsigned int)v;
	return true;
}

bool
fake_parse_seconds(const char *s, double *out)
{
	return parse_number(s, false, out);
}

/*
 * Splits s in place at blanks into at most max tokens. A unit suffix written
 * as a word of its own ("19818 MiB") is joined back to its number.
 */
static size_t
tokenize(char *s, char **tok, size_t max)
{
	size_t n = 0;

	for (char *p = s + strspn(s, " \t"); *p; p += strspn(p, " \t")) {
		char *end = p + strcspn(p, " \t");

		if (*end)
			*end++ = '\0';
		/* "?iB" first: most words are numbers */
		if (n > 0 && p[1] == 'i' && p[2] == 'B' &&
		    (!strcmp(p, "KiB") || !strcmp(p, "MiB") || !strcmp(p, "GiB") ||
		     !strcmp(p, "TiB"))) {
			/* the suffix lies after the previous token in the same buffer */
			memmove(tok[n - 1] + strlen(tok[n - 1]), p, 4);
		} else if (n == max) {
			return max + 1;
		} else {
			tok[n++] = p;
		}
		p = end;
	}
	return n;
}

static struct expr *
new_expr(struct parser *p, enum expr_kind kind, size_t nr_steps)
{
	struct expr *e = sc_alloc(p->sc, sizeof(*e) + nr_steps * sizeof(e->steps[0]));

	if (!e) {
		perr(p, "out of memory");
		return NULL;
	}
	e->kind = kind;
	e->nr_steps = nr_steps;
	return e;
}

/* tok[0..n) as numbers (with unit suffixes) into v */
static int
parse_args(struct parser *p, const char *what, char **tok, size_t n, double *v)
{
	for (size_t i = 0; i < n; i++)
		if (!parse_number(tok[i], true, &v[i]))
			return perr(p, "%s: '%s' is not a number", what, tok[i]);
	return 0;
}

static int
parse_steps(struct parser *p, char **tok, size_t n, const struct expr **out)
{
	struct expr *e;

	if (n == 0)
		return perr(p, "steps: expected T:V pairs");
	e = new_expr(p, EX_STEPS, n);
	if (!e)
		return -1;
	for (size_t i = 0; i < n; i++) {
		char *colon = strchr(tok[i], ':');

		if (!colon)
			return perr(p, "steps: expected T:V, not '%s'", tok[i]);
		*colon = '\0';
		if (!parse_number(tok[i], false, &e->steps[i].t) ||
		    !parse_number(colon + 1, true, &e->steps[i].v))
			return perr(p, "steps: bad pair '%s:%s'", tok[i], colon + 1);
		if (i > 0 && e->steps[i].t <= e->steps[i - 1].t)
			return perr(p, "steps: times must ascend");
	}
	*out = e;
	return 0;
}

/* ramp V0 V1 T0 T1, the words after "ramp" in tok */
static struct expr *
parse_ramp(struct parser *p, char **tok, size_t n)
{
	struct expr *e;
	double v[4];

	if (n != 4) {
		perr(p, "expected 'ramp V0 V1 T0 T1'");
		return NULL;
	}
	if (parse_args(p, "ramp", tok, 4, v))
		return NULL;
	if (v[3] < v[2]) {
		perr(p, "ramp: T1 is before T0");
		return NULL;
	}
	e = new_expr(p, EX_RAMP, 0);
	if (e) {
		e->u.ramp.v0 = v[0];
		e->u.ramp.v1 = v[1];
		e->u.ramp.t0 = v[2];
		e->u.ramp.t1 = v[3];
	}
	return e;
}

/* square LOW HIGH PERIOD [DUTY] */
static struct expr *
parse_square(struct parser *p, char **tok, size_t n)
{
	double v[4] = { 0, 0, 0, 0.5 };
	struct expr *e;

	if (n != 3 && n != 4) {
		perr(p, "expected 'square LOW HIGH PERIOD [DUTY]'");
		return NULL;
	}
	if (parse_args(p, "square", tok, n, v))
		return NULL;
	if (v[2] <= 0) {
		perr(p, "square: PERIOD must be positive");
		return NULL;
	}
	if (v[3] < 0 || v[3] > 1) {
		perr(p, "square: DUTY must be between 0 and 1");
		return NULL;
	}
	e = new_expr(p, EX_SQUARE, 0);
	if (e) {
		e->u.square.low = v[0];
		e->u.square.high = v[1];
		e->u.square.period = v[2];
		e->u.square.duty = v[3];
	}
	return e;
}

/* sine MIN MAX PERIOD */
static struct expr *
parse_sine(struct parser *p, char **tok, size_t n)
{
	struct expr *e;
	double v[3];

	if (n != 3) {
		perr(p, "expected 'sine MIN MAX PERIOD'");
		return NULL;
	}
	if (parse_args(p, "sine", tok, 3, v))
		return NULL;
	if (v[2] <= 0) {
		perr(p, "sine: PERIOD must be positive");
		return NULL;
	}
	e = new_expr(p, EX_SINE, 0);
	if (e) {
		e->u.sine.min = v[0];
		e->u.sine.max = v[1];
		e->u.sine.period = v[2];
	}
	return e;
}

/* N/A, error NAME, a number: what is left once the keywords are ruled out */
static struct expr *
parse_simple(struct parser *p, char **tok, size_t n)
{
	struct expr *e;
	double v;
	/* no keyword starts with a digit, and nearly every value is a number */
	bool word = !isdigit((unsigned char)tok[0][0]);

	if (word && n == 1 && !strcmp(tok[0], "N/A"))
		return new_expr(p, EX_NA, 0);
	if (word && !strcmp(tok[0], "error")) {
		if (n != 2) {
			perr(p, "expected 'error NAME'");
			return NULL;
		}
		e = new_expr(p, EX_ERROR, 0);
		if (e && !nvml_error_by_name(tok[1], &e->u.error)) {
			perr(p, "unknown NVML error '%s'", tok[1]);
			return NULL;
		}
		return e;
	}
	if (n != 1) {
		perr(p, "unexpected '%s' after the value", tok[1]);
		return NULL;
	}
	if (!parse_number(tok[0], true, &v)) {
		perr(p, "'%s' is not a number or a value expression", tok[0]);
		return NULL;
	}
	e = new_expr(p, EX_CONST, 0);
	if (e)
		e->u.value = v;
	return e;
}

static int
parse_expr_tokens(struct parser *p, char **tok, size_t n, const struct expr **out)
{
	struct expr *e;

	if (isdigit((unsigned char)tok[0][0]))
		e = parse_simple(p, tok, n); /* a number: no keyword starts with a digit */
	else if (!strcmp(tok[0], "steps"))
		return parse_steps(p, tok + 1, n - 1, out);
	else if (!strcmp(tok[0], "ramp"))
		e = parse_ramp(p, tok + 1, n - 1);
	else if (!strcmp(tok[0], "square"))
		e = parse_square(p, tok + 1, n - 1);
	else if (!strcmp(tok[0], "sine"))
		e = parse_sine(p, tok + 1, n - 1);
	else
		e = parse_simple(p, tok, n);
	if (!e)
		return -1;
	*out = e;
	return 0;
}

/*
 * Runs fn over the blank-separated words of value, in a scratch copy that
 * the tokens point into: on the stack for the short values that are nearly
 * all of them (a scenario has thousands), else on the heap.
 */
static int
with_tokens(struct parser *p, const char *value,
            int (*fn)(struct parser *, char **, size_t, void *), void *arg)
{
	char copy_short[128], *tok_short[sizeof(copy_short) / 2 + 1];
	size_t len = strlen(value), max = len / 2 + 1, n;
	bool small = len < sizeof(copy_short);
	char *copy = small ? copy_short : malloc(len + 1);
	char **tok = small ? tok_short : calloc(max, sizeof(*tok));
	int ret;

	if (!copy || !tok) {
		ret = perr(p, "out of memory");
		goto out;
	}
	memcpy(copy, value, len + 1);
	n = tokenize(copy, tok, max);
	if (n == 0)
		ret = perr(p, "missing value");
	else if (n > max)
		ret = perr(p, "too many words");
	else
		ret = fn(p, tok, n, arg);
out:
	if (!small) {
		free(tok);
		free(copy);
	}
	return ret;
}

static int
expr_cb(struct parser *p, char **tok, size_t n, void *arg)
{
	return parse_expr_tokens(p, tok, n, arg);
}

static int
parse_expr(struct parser *p, const char *value, const struct expr **out)
{
	return with_tokens(p, value, expr_cb, out);
}

static bool
is_symbol(const char *name, size_t len, bool prefix)
{
	for (size_t i = 0; fake_symbols[i]; i++) {
		if (prefix ? !strncmp(fake_symbols[i], name, len) : !strcmp(fake_symbols[i], name))
			return true;
	}
	return false;
}

/* FUNCTION ERROR|MILLISECONDS [from T] [until T] */
static int
fault_cb(struct parser *p, char **tok, size_t n, void *arg)
{
	struct fault *f = arg;
	const char *what = f->kind == FAULT_FAIL ? "fail" : "delay";
	size_t len;

	if (n < 2)
		return perr(p, "expected '%s = FUNCTION %s [from T] [until T]'", what,
		            f->kind == FAULT_FAIL ? "ERROR" : "MILLISECONDS");
	len = strlen(tok[0]);
	f->prefix = len > 0 && tok[0][len - 1] == '*';
	f->fn_len = f->prefix ? len - 1 : len;
	tok[0][f->fn_len] = '\0';
	if (!is_symbol(tok[0], f->fn_len, f->prefix))
		return perr(p, "%s: no NVML function %s%s", what, tok[0], f->prefix ? "*" : "");
	f->fn = sc_strdup(p->sc, tok[0]);
	if (!f->fn)
		return perr(p, "out of memory");
	if (f->kind == FAULT_FAIL) {
		if (!nvml_error_by_name(tok[1], &f->error))
			return perr(p, "fail: unknown NVML error '%s'", tok[1]);
	} else if (!parse_number(tok[1], false, &f->ms) || f->ms < 0) {
		return perr(p, "delay: '%s' is not a number of milliseconds", tok[1]);
	}
	f->from = -INFINITY;
	f->until = INFINITY;
	for (size_t i = 2; i < n; i += 2) {
		double *slot;

		if (!strcmp(tok[i], "from"))
			slot = &f->from;
		else if (!strcmp(tok[i], "until"))
			slot = &f->until;
		else
			return perr(p, "%s: expected 'from T' or 'until T', not '%s'", what,
			            tok[i]);
		if (i + 1 == n || !parse_number(tok[i + 1], false, slot))
			return perr(p, "%s: '%s' needs a time in seconds", what, tok[i]);
	}
	if (f->until <= f->from)
		return perr(p, "%s: 'until' must come after 'from'", what);
	return 0;
}

static int
parse_fault(struct parser *p, enum fault_kind kind, const char *value, struct fault **list)
{
	struct fault *f = sc_alloc(p->sc, sizeof(*f));

	if (!f)
		return perr(p, "out of memory");
	f->kind = kind;
	if (with_tokens(p, value, fault_cb, f))
		return -1;
	while (*list)
		list = &(*list)->next;
	*list = f;
	return 0;
}

/* xid = T:CODE ...: the Xid errors of a GPU, times ascending (equal ones keep their order) */
static int
xid_cb(struct parser *p, char **tok, size_t n, void *arg)
{
	struct gpu *g = arg;
	struct xid_event *v = sc_alloc(p->sc, n * sizeof(*v));

	if (!v)
		return perr(p, "out of memory");
	for (size_t i = 0; i < n; i++) {
		char *colon = strchr(tok[i], ':');

		if (!colon)
			return perr(p, "xid: expected T:CODE, not '%s'", tok[i]);
		*colon = '\0';
		if (!parse_number(tok[i], false, &v[i].t) || v[i].t < 0)
			return perr(p, "xid: '%s' is not a time in seconds", tok[i]);
		if (!parse_uint(colon + 1, &v[i].code) || !v[i].code)
			return perr(p, "xid: '%s' is not an Xid code", colon + 1);
		if (i > 0 && v[i].t < v[i - 1].t)
			return perr(p, "xid: times must ascend");
	}
	g->xids = v;
	g->nr_xids = n;
	g->xid_line = p->line;
	return 0;
}

/*
 * nvlink_peers = I[,I...]: link n of the GPU goes to GPU I, the n-th of the
 * list (an index repeated: more links to that GPU), or to an NVSwitch where
 * the list says `switch`; `none`: NVLink without an active link.
 */
static int
nvlink_cb(struct parser *p, char **tok, size_t n, void *arg)
{
	struct gpu *g = arg;

	g->has_nvlink = true;
	g->nvlink_line = p->line;
	if (n == 1 && !strcmp(tok[0], "none"))
		return 0;
	for (size_t i = 0; i < n; i++) {
		for (char *s = tok[i], *end; *s; s = end) {
			unsigned int peer;
			char save;

			end = s + strcspn(s, ",");
			save = *end;
			*end = '\0';
			if (!strcmp(s, "switch"))
				peer = FAKE_NVLINK_SWITCH;
			else if (!parse_uint(s, &peer) || peer >= FAKE_MAX_GPUS)
				return perr(p, "nvlink_peers: '%s' is not a GPU index or 'switch'",
				            s);
			if (g->nr_nvlinks == FAKE_NVLINK_MAX_LINKS)
				return perr(p, "nvlink_peers: more than %d links",
				            FAKE_NVLINK_MAX_LINKS);
			g->nvlink_peer[g->nr_nvlinks++] = (unsigned char)peer;
			if (save)
				end++;
		}
	}
	if (!g->nr_nvlinks)
		return perr(p, "nvlink_peers: expected GPU indices or 'none'");
	return 0;
}

static int
set_string(struct parser *p, const char **slot, const char *value)
{
	*slot = sc_strdup(p->sc, value);
	return *slot ? 0 : perr(p, "out of memory");
}

static bool
hex_field(const char **s, size_t digits, unsigned int *out)
{
	unsigned int v = 0;

	for (size_t i = 0; i < digits; i++) {
		if (!isxdigit((unsigned char)(*s)[i]))
			return false;
		v = v * 16 + (unsigned int)hexval((*s)[i]);
	}
	*s += digits;
	*out = v;
	return true;
}

/* DDDDDDDD:BB:DD.F, the domain also as 4 digits */
static int
parse_bus_id(struct parser *p, struct gpu *g, const char *value)
{
	const char *s = value;
	size_t domain_digits = strcspn(s, ":");

	if ((domain_digits != 8 && domain_digits != 4) ||
	    !hex_field(&s, domain_digits, &g->pci_domain) || *s++ != ':' ||
	    !hex_field(&s, 2, &g->pci_bus) || *s++ != ':' || !hex_field(&s, 2, &g->pci_device) ||
	    *s++ != '.' || !hex_field(&s, 1, &g->pci_function) || *s)
		return perr(p, "pci_bus_id: expected DDDDDDDD:BB:DD.F, not '%s'", value);
	if (g->pci_device > 0x1f || g->pci_function > 7)
		return perr(p, "pci_bus_id: no such PCI device or function in '%s'", value);
	return 0;
}

static void
format_bus_ids(struct gpu *g)
{
	snprintf(g->bus_id, sizeof(g->bus_id), "%08X:%02X:%02X.%X", g->pci_domain, g->pci_bus,
	         g->pci_device, g->pci_function);
	snprintf(g->bus_id_legacy, sizeof(g->bus_id_legacy), "%04X:%02X:%02X.%X",
	         g->pci_domain & 0xffff, g->pci_bus, g->pci_device, g->pci_function);
}

static int
parse_compute_cap(struct parser *p, struct gpu *g, const char *value)
{
	unsigned int major, minor;
	int len = 0;

	if (sscanf(value, "%u.%u%n", &major, &minor, &len) != 2 || value[len] ||
	    !isdigit((unsigned char)value[0]) || major > INT_MAX || minor > INT_MAX)
		return perr(p, "compute_capability: expected MAJOR.MINOR, not '%s'", value);
	g->cc_major = (int)major;
	g->cc_minor = (int)minor;
	g->has_compute_cap = true;
	return 0;
}

/*
 * live_processes = DIR: relative to the folder of the scenario file, as a
 * scenario is read from wherever the test runs.
 */
static int
set_live_dir(struct parser *p, const char *value)
{
	const char *slash = strrchr(p->path, '/');
	size_t dir_len = slash ? (size_t)(slash - p->path) + 1 : 0, n = strlen(value);
	char *d;

	if (value[0] == '/' || !dir_len)
		return set_string(p, &p->sc->live_dir, value);
	d = sc_alloc(p->sc, dir_len + n + 1);
	if (!d)
		return perr(p, "out of memory");
	memcpy(d, p->path, dir_len);
	memcpy(d + dir_len, value, n + 1);
	p->sc->live_dir = d;
	return 0;
}

/*
 * Is key name? Their first letters first: benchmarks load scenarios of
 * thousands of lines, each key looked for in lists of up to 80 names.
 */
static inline bool
key_is(const char *key, const char *name)
{
	return key[0] == name[0] && !strcmp(key, name);
}

static int
system_key(struct parser *p, const char *key, const char *value)
{
	struct scenario *sc = p->sc;

	if (key_is(key, "driver_version"))
		return set_string(p, &sc->driver_version, value);
	if (key_is(key, "nvml_version"))
		return set_string(p, &sc->nvml_version, value);
	if (key_is(key, "cuda_version"))
		return parse_expr(p, value, &sc->cuda_version);
	if (key_is(key, "init_error")) {
		/* the bare NAME, or the `error NAME` of value expressions */
		const char *name = value;

		if (!strncmp(name, "error", 5) && isspace((unsigned char)name[5]))
			for (name += 5; isspace((unsigned char)*name);)
				name++;
		if (!nvml_error_by_name(name, &sc->init_error))
			return perr(p, "init_error: unknown NVML error '%s'", name);
		return 0;
	}
	if (key_is(key, "period")) {
		if (!parse_number(value, false, &sc->period) || sc->period <= 0)
			return perr(p, "period: expected a positive number of seconds");
		return 0;
	}
	if (key_is(key, "process_count_hint")) {
		if (!parse_uint(value, &sc->count_hint) || !sc->count_hint)
			return perr(p, "process_count_hint: expected a count above 0");
		return 0;
	}
	if (key_is(key, "process_v3_layout")) {
		if (strcmp(value, "v2") && strcmp(value, "cc"))
			return perr(p, "process_v3_layout: expected v2 or cc, not '%s'", value);
		sc->cc_layout = !strcmp(value, "cc");
		return 0;
	}
	if (key_is(key, "live_processes"))
		return set_live_dir(p, value);
	if (key_is(key, "fail"))
		return parse_fault(p, FAULT_FAIL, value, &sc->faults);
	if (key_is(key, "delay"))
		return parse_fault(p, FAULT_DELAY, value, &sc->faults);
	return perr(p, "unknown key '%s' in [system]", key);
}

static int
gpu_key(struct parser *p, const char *key, const char *value)
{
	struct gpu *g = p->gpu;

	for (int k = 0; k < GK__COUNT; k++)
		if (key_is(key, gpu_num_keys[k]))
			return parse_expr(p, value, &g->num[k]);
	for (int k = 0; k < GS__COUNT; k++)
		if (key_is(key, gpu_str_keys[k]))
			return set_string(p, &g->str[k], value);
	if (key_is(key, "pci_bus_id"))
		return parse_bus_id(p, g, value);
	if (key_is(key, "pci_device_id")) {
		if (!parse_uint(value, &g->pci_device_id))
			return perr(p, "pci_device_id: expected a 32-bit number");
		return 0;
	}
	if (key_is(key, "pci_subsystem_id")) {
		if (!parse_uint(value, &g->pci_subsystem_id))
			return perr(p, "pci_subsystem_id: expected a 32-bit number");
		return 0;
	}
	if (key_is(key, "compute_capability"))
		return parse_compute_cap(p, g, value);
	if (key_is(key, "xid"))
		return with_tokens(p, value, xid_cb, g);
	if (key_is(key, "lost") || key_is(key, "reset_required")) {
		double *slot = key[0] == 'l' ? &g->lost : &g->reset_required;

		if (!parse_number(value, false, slot))
			return perr(p, "%s: expected a time in seconds", key);
		return 0;
	}
	if (key_is(key, "topology_group") || key_is(key, "topology_node")) {
		unsigned int *slot = key[9] == 'g' ? &g->topology_group : &g->topology_node;

		if (!parse_uint(value, slot))
			return perr(p, "%s: expected a number", key);
		g->has_topology = true;
		return 0;
	}
	if (key_is(key, "nvlink_peers"))
		return with_tokens(p, value, nvlink_cb, g);
	if (key_is(key, "fail"))
		return parse_fault(p, FAULT_FAIL, value, &g->faults);
	if (key_is(key, "delay"))
		return parse_fault(p, FAULT_DELAY, value, &g->faults);
	return perr(p, "unknown key '%s' in [gpu]", key);
}

static int
process_key(struct parser *p, const char *key, const char *value)
{
	struct proc *pr = p->proc;

	for (int k = 0; k < PU__COUNT; k++)
		if (key_is(key, proc_util_keys[k]))
			return parse_expr(p, value, &pr->util[k]);
	if (key_is(key, "gpu")) {
		if (!parse_uint(value, &pr->gpu))
			return perr(p, "gpu: expected a GPU index");
		return 0;
	}
	if (key_is(key, "type")) {
		if (!strcmp(value, "compute"))
			pr->types = PT_COMPUTE;
		else if (!strcmp(value, "graphics"))
			pr->types = PT_GRAPHICS;
		else if (!strcmp(value, "compute+graphics"))
			pr->types = PT_COMPUTE | PT_GRAPHICS;
		else if (!strcmp(value, "mps"))
			pr->types = PT_MPS;
		else
			return perr(p, "type: expected compute, graphics, compute+graphics or mps");
		return 0;
	}
	if (key_is(key, "used_memory"))
		return parse_expr(p, value, &pr->used_memory);
	if (key_is(key, "start") || key_is(key, "end")) {
		double *slot = key[0] == 's' ? &pr->start : &pr->end;

		if (!parse_number(value, false, slot))
			return perr(p, "%s: expected a time in seconds", key);
		return 0;
	}
	if (key_is(key, "gpu_instance") || key_is(key, "compute_instance")) {
		unsigned int *slot = key[0] == 'g' ? &pr->gpu_instance : &pr->compute_instance;

		if (!parse_uint(value, slot))
			return perr(p, "%s: expected a 32-bit number", key);
		return 0;
	}
	if (key_is(key, "name"))
		return set_string(p, &pr->name, value);
	return perr(p, "unknown key '%s' in [process]", key);
}

/* a [mig] section: the MIG keys, then those of [gpu] (memory, name, uuid, faults) */
static int
mig_key(struct parser *p, const char *key, const char *value)
{
	struct gpu *m = p->mig, *parent = p->gpu;
	int rc;

	if (key_is(key, "profile"))
		return set_string(p, &m->profile, value);
	if (key_is(key, "gpu_instance") || key_is(key, "compute_instance") ||
	    key_is(key, "multiprocessor_count")) {
		unsigned int *slot = key[0] == 'g'   ? &m->gpu_instance
		                     : key[0] == 'c' ? &m->compute_instance
		                                     : &m->sm_count;

		if (!parse_uint(value, slot) || *slot > 64)
			return perr(p, "%s: expected a number up to 64", key);
		return 0;
	}
	p->gpu = m;
	rc = gpu_key(p, key, value);
	p->gpu = parent;
	return rc;
}

/* checks what only the end of a section can tell */
static int
end_section(struct parser *p)
{
	if (p->sec == SEC_MIG && p->mig->gpu_instance == NVML_INSTANCE_ID_NONE) {
		p->line = p->mig->mig_line;
		return perr(p, "[mig] needs a 'gpu_instance' key");
	}
	if (p->sec == SEC_PROCESS && p->proc->gpu == UINT_MAX) {
		p->line = p->proc->line;
		return perr(p, "[process %u] needs a 'gpu' key", p->proc->pid);
	}
	return 0;
}

static int
begin_section(struct parser *p, char *inner)
{
	char *name = trim(inner), *arg = name + strcspn(name, " \t");

	if (*arg)
		*arg++ = '\0';
	arg = trim(arg);
	if (end_section(p))
		return -1;
	p->nr_seen = 0;
	if (!strcmp(name, "system") && !*arg) {
		if (p->seen_system)
			return perr(p, "a second [system] section");
		p->seen_system = true;
		p->sec = SEC_SYSTEM;
		return 0;
	}
	if (!strcmp(name, "gpu")) {
		struct scenario *sc = p->sc;
		unsigned int n;

		if (*arg && (!parse_uint(arg, &n) || n != sc->nr_gpus))
			return perr(p, "[gpu %s] should be [gpu %u]: GPUs are numbered in order",
			            arg, sc->nr_gpus);
		if (sc->nr_gpus == FAKE_MAX_GPUS)
			return perr(p, "more than %d GPUs", FAKE_MAX_GPUS);
		p->gpu = &sc->gpus[sc->nr_gpus];
		p->gpu->index = sc->nr_gpus++;
		p->gpu->lost = INFINITY;
		p->gpu->reset_required = INFINITY;
		/* the default bus id: 00000000:XX:00.0 with XX the index + 1 */
		p->gpu->pci_bus = p->gpu->index + 1;
		p->sec = SEC_GPU;
		return 0;
	}
	if (!strcmp(name, "mig") && !*arg) {
		struct gpu *m;

		if (!p->gpu)
			return perr(p, "[mig] before any [gpu]: it belongs to the [gpu] above it");
		if (p->gpu->nr_mig == FAKE_MAX_MIG)
			return perr(p, "more than %d MIG devices on GPU %u", FAKE_MAX_MIG,
			            p->gpu->index);
		m = sc_alloc(p->sc, sizeof(*m));
		if (!m)
			return perr(p, "out of memory");
		m->parent = p->gpu;
		m->index = p->gpu->index;
		m->mig_index = p->gpu->nr_mig;
		m->gpu_instance = NVML_INSTANCE_ID_NONE;
		m->mig_line = p->line;
		p->gpu->mig[p->gpu->nr_mig++] = m;
		p->mig = m;
		p->sec = SEC_MIG;
		return 0;
	}
	if (!strcmp(name, "process")) {
		unsigned int pid;
		struct proc *pr;

		if (!parse_uint(arg, &pid))
			return perr(p, "expected [process PID]");
		pr = sc_alloc(p->sc, sizeof(*pr));
		if (!pr)
			return perr(p, "out of memory");
		pr->pid = pid;
		pr->line = p->line;
		pr->gpu = UINT_MAX;
		pr->types = PT_COMPUTE;
		pr->end = INFINITY;
		pr->gpu_instance = NVML_INSTANCE_ID_NONE;
		pr->compute_instance = NVML_INSTANCE_ID_NONE;
		*p->proc_tail = pr;
		p->proc_tail = &pr->next;
		p->proc = pr;
		p->sec = SEC_PROCESS;
		return 0;
	}
	return perr(p, "unknown section [%s%s%s]", name, *arg ? " " : "", arg);
}

/*
 * Refuses a key given twice in a section, except the repeatable faults. A
 * [gpu] section has about 80 keys: each is compared by its hash (FNV-1a)
 * with those before it, and by its text only when the hashes agree.
 */
static int
check_repeat(struct parser *p, const char *key)
{
	uint32_t h = 2166136261u;
	size_t len;

	if (key_is(key, "fail") || key_is(key, "delay"))
		return 0;
	for (len = 0; key[len]; len++)
		h = (h ^ (unsigned char)key[len]) * 16777619u;
	if (len >= MAX_KEY)
		return 0;
	for (size_t i = 0; i < p->nr_seen; i++)
		if (p->seen_hash[i] == h && !strcmp(p->seen[i], key))
			return perr(p, "'%s' given twice", key);
	if (p->nr_seen == MAX_SEEN)
		return perr(p, "too many keys in one section");
	p->seen_hash[p->nr_seen] = h;
	memcpy(p->seen[p->nr_seen++], key, len + 1);
	return 0;
}

static int
parse_line(struct parser *p, char *line)
{
	char *s = trim(line), *eq, *key, *value;
	size_t len;

	if (!*s || *s == '#' || *s == ';')
		return 0;
	if (*s == '[') {
		len = strlen(s);
		if (s[len - 1] != ']')
			return perr(p, "expected ']' at the end of the section line");
		s[len - 1] = '\0';
		return begin_section(p, s + 1);
	}
	eq = strchr(s, '=');
	if (!eq)
		return perr(p, "expected 'key = value' or a [section]");
	*eq = '\0';
	key = trim(s);
	value = trim(eq + 1);
	if (!*key)
		return perr(p, "missing key before '='");
	len = strlen(value);
	if (len >= 2 && value[0] == '"' && value[len - 1] == '"') {
		value[len - 1] = '\0';
		value++;
	} else if (!len) {
		return perr(p, "missing value for '%s'", key);
	}
	if (p->sec == SEC_NONE)
		return perr(p, "'%s' outside a section", key);
	if (check_repeat(p, key))
		return -1;
	switch (p->sec) {
	case SEC_SYSTEM:
		return system_key(p, key, value);
	case SEC_GPU:
		return gpu_key(p, key, value);
	case SEC_PROCESS:
		return process_key(p, key, value);
	case SEC_MIG:
		return mig_key(p, key, value);
	case SEC_NONE:
		break;
	}
	return -1;
}

static unsigned int
links_to(const struct gpu *g, unsigned int peer)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < g->nr_nvlinks; i++)
		n += g->nvlink_peer[i] == peer;
	return n;
}

/* an NVLink has two ends: each peer lists as many links back */
static int
check_nvlinks(struct parser *p, const struct gpu *g)
{
	const struct scenario *sc = p->sc;

	for (unsigned int i = 0; i < g->nr_nvlinks; i++) {
		unsigned int peer = g->nvlink_peer[i];

		p->line = g->nvlink_line;
		if (peer == FAKE_NVLINK_SWITCH)
			continue;
		if (peer >= sc->nr_gpus)
			return perr(p, "nvlink_peers: there is no GPU %u", peer);
		if (peer == g->index)
			return perr(p, "nvlink_peers: GPU %u cannot be linked to itself", peer);
		if (links_to(&sc->gpus[peer], g->index) != links_to(g, peer))
			return perr(
			        p, "nvlink_peers: GPU %u has %u links to GPU %u, which has %u back",
			        g->index, links_to(g, peer), peer,
			        links_to(&sc->gpus[peer], g->index));
	}
	return 0;
}

/* after the last line: what refers to what */
static int
finish(struct parser *p)
{
	struct scenario *sc = p->sc;

	if (end_section(p))
		return -1;
	for (const struct proc *pr = sc->procs; pr; pr = pr->next) {
		if (pr->gpu >= sc->nr_gpus) {
			p->line = pr->line;
			return perr(p, "[process %u]: there is no GPU %u", pr->pid, pr->gpu);
		}
	}
	for (unsigned int i = 0; i < sc->nr_gpus; i++) {
		const struct gpu *g = &sc->gpus[i];

		format_bus_ids(&sc->gpus[i]);
		if (check_nvlinks(p, g))
			return -1;
		for (unsigned int k = 0; k < g->nr_mig; k++) {
			for (unsigned int j = 0; j < k; j++) {
				if (g->mig[j]->gpu_instance == g->mig[k]->gpu_instance &&
				    g->mig[j]->compute_instance == g->mig[k]->compute_instance) {
					p->line = g->mig[k]->mig_line;
					return perr(p, "[mig]: GPU %u has two MIG devices %u:%u",
					            g->index, g->mig[k]->gpu_instance,
					            g->mig[k]->compute_instance);
				}
			}
			mig_finish(g->mig[k]);
		}
		/* an Xid past the period would never happen: time wraps before it */
		if (sc->period > 0 && g->nr_xids && g->xids[g->nr_xids - 1].t >= sc->period) {
			p->line = g->xid_line;
			return perr(p, "xid: a time of %g s is not within the period (%g s)",
			            g->xids[g->nr_xids - 1].t, sc->period);
		}
	}
	return 0;
}

int
scenario_load(const char *path, struct scenario **out)
{
	struct parser p = { .path = path };
	char *text = NULL, *line, *next;
	const char *live;
	size_t len = 0, cap = 0;
	FILE *f = NULL;
	int ret = -1;

	*out = NULL;
	p.sc = calloc(1, sizeof(*p.sc));
	if (!p.sc) {
		fprintf(stderr, "fake nvml: %s: out of memory\n", path);
		return -1;
	}
	p.proc_tail = &p.sc->procs;
	p.sc->path = sc_strdup(p.sc, path);
	if (!p.sc->path) {
		fprintf(stderr, "fake nvml: %s: out of memory\n", path);
		goto out;
	}
	f = fopen(path, "re");
	if (!f) {
		fprintf(stderr, "fake nvml: %s: %s\n", path, strerror(errno));
		goto out;
	}
	/* the whole file at once, then line by line in place (faster than getline) */
	for (;;) {
		size_t n;

		if (cap - len < 4096) {
			char *grown = realloc(text, cap * 2 + 8192);

			if (!grown) {
				fprintf(stderr, "fake nvml: %s: out of memory\n", path);
				goto out;
			}
			text = grown;
			cap = cap * 2 + 8192;
		}
		n = fread(text + len, 1, cap - len - 1, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		fprintf(stderr, "fake nvml: %s: %s\n", path, strerror(errno));
		goto out;
	}
	text[len] = '\0';
	for (line = text; line < text + len; line = next) {
		char *nl = memchr(line, '\n', (size_t)(text + len - line));

		next = nl ? nl + 1 : text + len;
		if (nl)
			*nl = '\0';
		p.line++;
		if (parse_line(&p, line))
			goto out;
	}
	if (finish(&p))
		goto out;
	/* the environment names the folder of a test's own run */
	live = getenv("FAKE_NVML_LIVE_DIR");
	if (live && *live) {
		p.sc->live_dir = sc_strdup(p.sc, live);
		if (!p.sc->live_dir) {
			fprintf(stderr, "fake nvml: %s: out of memory\n", path);
			goto out;
		}
	}
	*out = p.sc;
	p.sc = NULL;
	ret = 0;
out:
	if (f)
		fclose(f);
	free(text);
	scenario_free(p.sc);
	return ret;
}

nvmlReturn_t
expr_eval(const struct expr *e, double t, double *v)
{
	double phase;

	if (!e)
		return NVML_ERROR_NOT_SUPPORTED;
	switch (e->kind) {
	case EX_NA:
		return NVML_ERROR_NOT_SUPPORTED;
	case EX_ERROR:
		return e->u.error;
	case EX_CONST:
		*v = e->u.value;
		break;
	case EX_STEPS:
		/* V0 before T0 as well */
		*v = e->steps[0].v;
		for (size_t i = 1; i < e->nr_steps && e->steps[i].t <= t; i++)
			*v = e->steps[i].v;
		break;
	case EX_RAMP:
		if (t <= e->u.ramp.t0)
			*v = e->u.ramp.v0;
		else if (t >= e->u.ramp.t1)
			*v = e->u.ramp.v1;
		else
			*v = e->u.ramp.v0 + (e->u.ramp.v1 - e->u.ramp.v0) * (t - e->u.ramp.t0) /
			                            (e->u.ramp.t1 - e->u.ramp.t0);
		break;
	case EX_SQUARE:
		/* floor, not fmod: a time before 0 still lands in [0, PERIOD) */
		phase = t - e->u.square.period * floor(t / e->u.square.period);
		*v = phase < e->u.square.duty * e->u.square.period ? e->u.square.high
		                                                   : e->u.square.low;
		break;
	case EX_SINE:
		*v = e->u.sine.min + (e->u.sine.max - e->u.sine.min) *
		                             (1 - cos(2 * M_PI * t / e->u.sine.period)) / 2;
		break;
	}
	return NVML_SUCCESS;
}
