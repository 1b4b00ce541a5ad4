/*
 * The fake libcuda.so.1's scenario file (docs/fake-cuda.md): [system],
 * [device] and [link] sections of key = value lines, read once at the first
 * cuInit.
 */
#include "fake.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *name;
	CUresult value;
} results[] = {
#define FCU_RESULT_ROW(n, v, s) { #n, v },
	FCU_RESULTS(FCU_RESULT_ROW)
#undef FCU_RESULT_ROW
};

long
fcu_result_by_name(const char *name)
{
	char *end;
	long v;

	for (size_t i = 0; i < sizeof(results) / sizeof(results[0]); i++) {
		const char *n = results[i].name;
		if (!strcmp(name, n) || (!strncmp(n, "CUDA_ERROR_", 11) && !strcmp(name, n + 11)))
			return (long)results[i].value;
	}
	errno = 0;
	v = strtol(name, &end, 10);
	if (errno || end == name || *end || v < 0 || v > 100000)
		return -1;
	return v;
}

struct parser {
	const char *path;
	unsigned line;
};

static int __attribute__((format(printf, 2, 3))) fail(const struct parser *ps, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fake cuda: %s:%u: ", ps->path, ps->line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

static char *
trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	if (e - s >= 2 && s[0] == '"' && e[-1] == '"') {
		e[-1] = '\0';
		s++;
	}
	return s;
}

/* a number with an optional KiB/MiB/GiB/TiB suffix; -1 if malformed */
static int
number(const char *s, double *v)
{
	char *end;
	double m = 1;

	errno = 0;
	*v = strtod(s, &end);
	if (errno || end == s || !isfinite(*v))
		return -1;
	while (*end == ' ')
		end++;
	if (!strcmp(end, "KiB"))
		m = 1024.0;
	else if (!strcmp(end, "MiB"))
		m = 1024.0 * 1024;
	else if (!strcmp(end, "GiB"))
		m = 1024.0 * 1024 * 1024;
	else if (!strcmp(end, "TiB"))
		m = 1024.0 * 1024 * 1024 * 1024;
	else if (*end)
		return -1;
	*v *= m;
	return 0;
}

static int
parse_uuid(const char *s, unsigned char out[16])
{
	int n = 0;

	if (!strncmp(s, "GPU-", 4))
		s += 4;
	for (; *s && n < 32; s++) {
		if (*s == '-')
			continue;
		if (!isxdigit((unsigned char)*s))
			return -1;
		int d = isdigit((unsigned char)*s) ? *s - '0'
		                                   : tolower((unsigned char)*s) - 'a' + 10;
		if (n % 2 == 0)
			out[n / 2] = (unsigned char)(d << 4);
		else
			out[n / 2] |= (unsigned char)d;
		n++;
	}
	return n == 32 && !*s ? 0 : -1;
}

static void
dev_defaults(struct fcu_dev *d, int index)
{
	memset(d, 0, sizeof(*d));
	d->index = index;
	snprintf(d->name, sizeof(d->name), "NVIDIA Fake GPU");
	snprintf(d->pci_bus_id, sizeof(d->pci_bus_id), "0000:%02x:00.0", (index + 1) & 0xff);
	d->pci_bus = (unsigned)(index + 1) & 0xff;
	for (int i = 0; i < 16; i++)
		d->uuid[i] = (unsigned char)(0x10 * (index + 1) + i);
	d->cc_major = 9;
	d->cc_minor = 0;
	d->sms = 132;
	d->clock_khz = 1980000;
	d->mem_clock_khz = 2619000;
	d->bus_width = 5120;
	d->max_threads = 1024;
	d->async_engines = 3;
	d->ecc = 1;
	d->l2_bytes = 50ull << 20;
	d->mem_total = 256ull << 20;
	d->launch_s = 2.5e-6;
	d->h2d_pinned_Bps = d->d2h_pinned_Bps = 25e9;
	d->h2d_pageable_Bps = d->d2h_pageable_Bps = 12e9;
}

/* what the scenario leaves out follows from the clocks (bench-specs 3.4's shape) */
static void
dev_derive(struct fcu_dev *d)
{
	double f32 = 2.0 * 128 * d->sms * d->clock_khz * 1e3;
	const double scale[FR__COUNT] = {
		[FR_F64] = 0.5,         [FR_F32] = 1,     [FR_F16] = 2,      [FR_BF16] = 2,
		[FR_I32] = 0.5,         [FR_I8] = 2,      [FR_MMA_F16] = 8,  [FR_MMA_BF16] = 8,
		[FR_MMA_TF32] = 4,      [FR_MMA_I8] = 16, [FR_MMA_FP8] = 16, [FR_MATMUL] = 0.5,
		[FR_MATMUL_F64] = 0.25,
	};

	for (int r = 0; r < FR__COUNT; r++)
		if (d->rate[r] <= 0)
			d->rate[r] = f32 * scale[r];
	if (d->mem_Bps <= 0)
		d->mem_Bps = 2.0 * d->mem_clock_khz * 1e3 * d->bus_width / 8;
}

struct key {
	const char *name;
	char type; /* 'i' int, 'b' bytes (u64), 'g' GB/s, 't' tera per second, 'u' microseconds */
	size_t off;
};

#define K(n, t, f)                                \
	{                                         \
		n, t, offsetof(struct fcu_dev, f) \
	}
static const struct key dev_keys[] = {
	K("sm_count", 'i', sms),
	K("clock_mhz", 'k', clock_khz),
	K("mem_clock_mhz", 'k', mem_clock_khz),
	K("bus_width", 'i', bus_width),
	K("max_threads_per_block", 'i', max_threads),
	K("async_engines", 'i', async_engines),
	K("ecc", 'i', ecc),
	K("l2", 'b', l2_bytes),
	K("memory", 'b', mem_total),
	K("memory_used", 'b', mem_used_other),
	K("mem_gbps", 'g', mem_Bps),
	K("h2d_pinned_gbps", 'g', h2d_pinned_Bps),
	K("h2d_pageable_gbps", 'g', h2d_pageable_Bps),
	K("d2h_pinned_gbps", 'g', d2h_pinned_Bps),
	K("d2h_pageable_gbps", 'g', d2h_pageable_Bps),
	K("launch_us", 'u', launch_s),
	K("f64_tflops", 't', rate[FR_F64]),
	K("f32_tflops", 't', rate[FR_F32]),
	K("f16_tflops", 't', rate[FR_F16]),
	K("bf16_tflops", 't', rate[FR_BF16]),
	K("i32_tops", 't', rate[FR_I32]),
	K("i8_tops", 't', rate[FR_I8]),
	K("mma_f16_tflops", 't', rate[FR_MMA_F16]),
	K("mma_bf16_tflops", 't', rate[FR_MMA_BF16]),
	K("mma_tf32_tflops", 't', rate[FR_MMA_TF32]),
	K("mma_i8_tops", 't', rate[FR_MMA_I8]),
	K("mma_fp8_tflops", 't', rate[FR_MMA_FP8]),
	K("matmul_tflops", 't', rate[FR_MATMUL]),
	K("matmul_f64_tflops", 't', rate[FR_MATMUL_F64]),
};
#undef K

static int
dev_key(const struct parser *ps, struct fcu_dev *d, const char *k, const char *v)
{
	double x;

	for (size_t i = 0; i < sizeof(dev_keys) / sizeof(dev_keys[0]); i++) {
		const struct key *key = &dev_keys[i];
		void *f = (char *)d + key->off;
		if (strcmp(k, key->name))
			continue;
		if (number(v, &x) || x < 0)
			return fail(ps, "%s: not a number: '%s'", k, v);
		switch (key->type) {
		case 'i':
			if (x > 1e9)
				return fail(ps, "%s: too large: '%s'", k, v);
			*(int *)f = (int)x;
			break;
		case 'k':
			if (x > 1e6)
				return fail(ps, "%s: too large: '%s'", k, v);
			*(int *)f = (int)lround(x * 1000);
			break;
		case 'b':
			if (x > 1e18)
				return fail(ps, "%s: too large: '%s'", k, v);
			*(unsigned long long *)f = (unsigned long long)x;
			break;
		case 'g':
			*(double *)f = x * 1e9;
			break;
		case 't':
			*(double *)f = x * 1e12;
			break;
		case 'u':
			*(double *)f = x * 1e-6;
			break;
		}
		return 0;
	}
	if (!strcmp(k, "name")) {
		snprintf(d->name, sizeof(d->name), "%s", v);
	} else if (!strcmp(k, "uuid")) {
		if (parse_uuid(v, d->uuid))
			return fail(ps, "uuid: not GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx: '%s'",
			            v);
	} else if (!strcmp(k, "pci_bus_id")) {
		unsigned dom, bus, devn, fn;
		char tail;
		if (sscanf(v, "%x:%x:%x.%x%c", &dom, &bus, &devn, &fn, &tail) != 4 || bus > 0xff ||
		    devn > 0x1f || fn > 7)
			return fail(ps, "pci_bus_id: not DDDD:BB:DD.F: '%s'", v);
		d->pci_domain = dom;
		d->pci_bus = bus;
		d->pci_device = devn;
		snprintf(d->pci_bus_id, sizeof(d->pci_bus_id), "%04x:%02x:%02x.%x", dom, bus, devn,
		         fn);
	} else if (!strcmp(k, "compute_capability")) {
		int ma, mi;
		char tail;
		if (sscanf(v, "%d.%d%c", &ma, &mi, &tail) != 2 || ma < 1 || ma > 20 || mi < 0 ||
		    mi > 9)
			return fail(ps, "compute_capability: not MAJOR.MINOR: '%s'", v);
		d->cc_major = ma;
		d->cc_minor = mi;
	} else if (!strcmp(k, "fault")) {
		return -2; /* the caller's */
	} else {
		return fail(ps, "unknown key '%s' in [device]", k);
	}
	return 0;
}

/*
 *   fault = launch_failed KERNEL N
 *   fault = hang KERNEL N
 *   fault = corrupt KERNEL INDEX [BIT [N]]
 *   fault = illegal_address SECONDS
 *   fault = ecc_uncorrectable SECONDS
 *   fault = oom BYTES
 */
static int
fault_key(const struct parser *ps, struct fcu_dev *d, char *v)
{
	char *w[5] = { NULL }, *save = NULL;
	int n = 0;
	struct fcu_fault f = { .kern = -1, .bit = 30 };
	double x;

	if (d->nfault == FCU_MAX_FAULTS)
		return fail(ps, "more than %d faults", FCU_MAX_FAULTS);
	for (char *t = strtok_r(v, " \t", &save); t && n < 5; t = strtok_r(NULL, " \t", &save))
		w[n++] = t;
	if (!n)
		return fail(ps, "fault: empty");
	if (!strcmp(w[0], "launch_failed") || !strcmp(w[0], "hang") || !strcmp(w[0], "corrupt")) {
		f.kind = w[0][0] == 'l' ? FF_LAUNCH_FAILED : w[0][0] == 'h' ? FF_HANG : FF_CORRUPT;
		if (n < 3 || (f.kern = w[1] ? bench_kern_by_name(w[1]) : -1) < 0)
			return fail(ps, "fault %s: wants a kernel of bench/dev.h and a number",
			            w[0]);
		if (number(w[2], &x) || x < 0 || x != floor(x))
			return fail(ps, "fault %s: not a count: '%s'", w[0], w[2]);
		if (f.kind == FF_CORRUPT) {
			f.index = (unsigned long long)x;
			if (n > 3 && (number(w[3], &x) || x < 0 || x > 63))
				return fail(ps, "fault corrupt: bit not 0 to 63: '%s'", w[3]);
			if (n > 3)
				f.bit = (unsigned)x;
			if (n > 4 && (number(w[4], &x) || x < 0))
				return fail(ps, "fault corrupt: not a launch: '%s'", w[4]);
			f.launch = n > 4 ? (unsigned long long)x : 0;
		} else {
			if (x < 1)
				return fail(ps, "fault %s: launches count from 1", w[0]);
			f.launch = (unsigned long long)x;
		}
	} else if (!strcmp(w[0], "illegal_address") || !strcmp(w[0], "ecc_uncorrectable")) {
		f.kind = w[0][0] == 'i' ? FF_ILLEGAL_ADDRESS : FF_ECC;
		if (n != 2 || number(w[1], &x) || x < 0)
			return fail(ps, "fault %s: wants device seconds", w[0]);
		f.after_s = x;
	} else if (!strcmp(w[0], "oom")) {
		f.kind = FF_OOM;
		if (n < 2)
			return fail(ps, "fault oom: wants bytes");
		char joined[64];
		snprintf(joined, sizeof(joined), "%s%s%s", w[1], n > 2 ? " " : "",
		         n > 2 ? w[2] : "");
		if (number(joined, &x) || x < 0)
			return fail(ps, "fault oom: not bytes: '%s'", joined);
		f.bytes = (unsigned long long)x;
	} else {
		return fail(ps, "fault: unknown kind '%s'", w[0]);
	}
	d->fault[d->nfault++] = f;
	return 0;
}

static int
system_key(const struct parser *ps, struct fcu_scenario *sc, const char *k, const char *v)
{
	double x;

	if (!strcmp(k, "init_error")) {
		long r = fcu_result_by_name(v);
		if (r < 0)
			return fail(ps, "init_error: not a CUresult: '%s'", v);
		sc->init_error = (CUresult)r;
		return 0;
	}
	if (number(v, &x) || x < 0)
		return fail(ps, "%s: not a number: '%s'", k, v);
	if (!strcmp(k, "driver_version"))
		sc->driver_version = (int)x;
	else if (!strcmp(k, "realtime"))
		sc->realtime = x;
	else if (!strcmp(k, "ptx_version_max"))
		sc->ptx_max = (int)lround(x * 10);
	else
		return fail(ps, "unknown key '%s' in [system]", k);
	return 0;
}

/*
 *   devices = A B        (indexes of [device] sections, required)
 *   p2p = 1              (0: cuDeviceCanAccessPeer says no, both ways)
 *   gbps = G             (a peer copy's rate per direction; required with p2p)
 *   rank = R             (CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK)
 *   native_atomics = 0|1 (CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED)
 */
static int
link_key(const struct parser *ps, struct fcu_link *l, const char *k, const char *v)
{
	double x;

	if (!strcmp(k, "devices")) {
		int a, b;
		char tail;

		if (sscanf(v, "%d %d %c", &a, &b, &tail) != 2 || a < 0 || b < 0 ||
		    a >= FCU_MAX_DEVICES || b >= FCU_MAX_DEVICES || a == b)
			return fail(ps, "devices: not two different device indexes: '%s'", v);
		l->a = a;
		l->b = b;
		return 0;
	}
	if (number(v, &x) || x < 0)
		return fail(ps, "%s: not a number: '%s'", k, v);
	if (!strcmp(k, "p2p") || !strcmp(k, "native_atomics")) {
		if (x != 0 && x != 1)
			return fail(ps, "%s: not 0 or 1: '%s'", k, v);
		if (k[0] == 'p')
			l->p2p = x == 1;
		else
			l->atomics = (int)x;
	} else if (!strcmp(k, "gbps")) {
		l->Bps = x * 1e9;
	} else if (!strcmp(k, "rank")) {
		if (x > 1000 || x != floor(x))
			return fail(ps, "rank: not a small whole number: '%s'", v);
		l->rank = (int)x;
	} else {
		return fail(ps, "unknown key '%s' in [link]", k);
	}
	return 0;
}

const struct fcu_link *
fcu_link_of(const struct fcu_scenario *sc, int a, int b)
{
	for (int i = 0; i < sc->nlink; i++) {
		const struct fcu_link *l = &sc->link[i];

		if ((l->a == a && l->b == b) || (l->a == b && l->b == a))
			return l;
	}
	return NULL;
}

/* every link names two devices of the file, once, with a rate where it peers */
static int
links_check(const char *path, const struct fcu_scenario *sc)
{
	for (int i = 0; i < sc->nlink; i++) {
		const struct fcu_link *l = &sc->link[i];
		const char *why = NULL;

		if (l->a < 0)
			why = "no devices = A B";
		else if (l->a >= sc->ndev || l->b >= sc->ndev)
			why = "a device index past the [device] sections";
		else if (fcu_link_of(sc, l->a, l->b) != l)
			why = "the same two devices as an earlier [link]";
		else if (l->p2p && l->Bps <= 0)
			why = "p2p = 1 wants gbps";
		if (why) {
			fprintf(stderr, "fake cuda: %s: [link] %d: %s\n", path, i + 1, why);
			return -1;
		}
	}
	return 0;
}

int
fcu_scenario_read(const char *path, struct fcu_scenario *sc)
{
	struct parser ps = { path, 0 };
	char buf[1024];
	int section = 0; /* 1 system, 2 device, 3 link */
	int rc = 0;
	FILE *f;

	memset(sc, 0, sizeof(*sc));
	sc->driver_version = 13000;
	sc->realtime = 1;
	sc->ptx_max = 90;
	if (!(f = fopen(path, "r"))) {
		fprintf(stderr, "fake cuda: cannot open '%s': %s\n", path, strerror(errno));
		return -1;
	}
	while (rc == 0 && fgets(buf, sizeof(buf), f)) {
		char *s = trim(buf), *eq;
		ps.line++;
		if (!*s || *s == '#' || *s == ';')
			continue;
		if (!strcmp(s, "[system]")) {
			section = 1;
			continue;
		}
		if (!strcmp(s, "[device]")) {
			if (sc->ndev == FCU_MAX_DEVICES) {
				rc = fail(&ps, "more than %d devices", FCU_MAX_DEVICES);
				break;
			}
			dev_defaults(&sc->dev[sc->ndev], sc->ndev);
			sc->ndev++;
			section = 2;
			continue;
		}
		if (!strcmp(s, "[link]")) {
			if (sc->nlink == FCU_MAX_LINKS) {
				rc = fail(&ps, "more than %d links", FCU_MAX_LINKS);
				break;
			}
			sc->link[sc->nlink++] = (struct fcu_link){ .a = -1, .b = -1, .p2p = true };
			section = 3;
			continue;
		}
		if (*s == '[') {
			rc = fail(&ps, "unknown section %s", s);
			break;
		}
		if (!(eq = strchr(s, '='))) {
			rc = fail(&ps, "not key = value: '%s'", s);
			break;
		}
		*eq = '\0';
		char *k = trim(s), *v = trim(eq + 1);
		if (section == 1)
			rc = system_key(&ps, sc, k, v);
		else if (section == 2) {
			rc = dev_key(&ps, &sc->dev[sc->ndev - 1], k, v);
			if (rc == -2)
				rc = fault_key(&ps, &sc->dev[sc->ndev - 1], v);
		} else if (section == 3)
			rc = link_key(&ps, &sc->link[sc->nlink - 1], k, v);
		else
			rc = fail(&ps, "key outside a section: '%s'", k);
	}
	fclose(f);
	for (int i = 0; i < sc->ndev; i++)
		dev_derive(&sc->dev[i]);
	if (rc == 0)
		rc = links_check(path, sc);
	return rc;
}
