/*
 * This CPU's FP32 peak, from cpuinfo and cpufreq (bench/matmul.h), and the
 * memory and CPUs a benchmark may use.
 */
#include "bench/matmul.h"

#include <ctype.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/fileio.h"
#include "core/strbuf.h"

#define CPUINFO_CAP (256 * 1024)

/* Does the blank-separated list [p, end) hold word? */
static bool
has_word(const char *p, const char *end, const char *word)
{
	size_t len = strlen(word);

	while (p < end) {
		const char *q;

		while (p < end && isspace((unsigned char)*p))
			p++;
		q = p;
		while (q < end && !isspace((unsigned char)*q))
			q++;
		if ((size_t)(q - p) == len && !memcmp(p, word, len))
			return true;
		p = q;
	}
	return false;
}

/* The value of line [p, end) when its key (before ':', blanks trimmed) is key, else NULL. */
static const char *
value_of(const char *p, const char *end, const char *key)
{
	const char *colon = memchr(p, ':', (size_t)(end - p));
	const char *k = colon;
	size_t len = strlen(key);

	if (!colon)
		return NULL;
	while (k > p && (k[-1] == ' ' || k[-1] == '\t'))
		k--;
	if ((size_t)(k - p) != len || memcmp(p, key, len))
		return NULL;
	colon++;
	while (colon < end && (*colon == ' ' || *colon == '\t'))
		colon++;
	return colon;
}

static void
copy_span(char *dst, size_t size, const char *p, const char *end)
{
	size_t n = (size_t)(end - p);

	while (n && isspace((unsigned char)p[n - 1]))
		n--;
	if (n >= size)
		n = size - 1;
	memcpy(dst, p, n);
	dst[n] = '\0';
}

void
bench_cpu_peak_parse(const char *cpuinfo, unsigned long long max_khz, const char *clock_file,
                     unsigned cpus, struct bench_cpu_peak *p)
{
	const char *flags = NULL, *flags_end = NULL, *feat = NULL, *feat_end = NULL;
	char impl[32] = "", part[32] = "";
	double cpuinfo_mhz = 0;
	const char *s = cpuinfo ? cpuinfo : "";
	const char *fma_note = "x 2 FLOP per FMA";

	memset(p, 0, sizeof(*p));
	p->cpus = cpus ? cpus : 1;
	while (*s) {
		const char *end = strchr(s, '\n');
		const char *v;

		if (!end)
			end = s + strlen(s);
		if (!flags && (v = value_of(s, end, "flags"))) {
			flags = v;
			flags_end = end;
		} else if (!feat && (v = value_of(s, end, "Features"))) {
			feat = v;
			feat_end = end;
		} else if (!p->model[0] && (v = value_of(s, end, "model name"))) {
			copy_span(p->model, sizeof(p->model), v, end);
		} else if (!impl[0] && (v = value_of(s, end, "CPU implementer"))) {
			copy_span(impl, sizeof(impl), v, end);
		} else if (!part[0] && (v = value_of(s, end, "CPU part"))) {
			copy_span(part, sizeof(part), v, end);
		} else if ((v = value_of(s, end, "cpu MHz"))) {
			double mhz = strtod(v, NULL);

			if (mhz > cpuinfo_mhz)
				cpuinfo_mhz = mhz;
		}
		s = *end ? end + 1 : end;
	}
	if (!p->model[0] && impl[0])
		snprintf(p->model, sizeof(p->model), "Arm CPU implementer %s part %s", impl,
		         part[0] ? part : "?");

	p->lanes = 1;
	str_copy(p->isa, sizeof(p->isa), "scalar");
	if (flags) {
		if (has_word(flags, flags_end, "avx512f")) {
			p->lanes = 16;
			str_copy(p->isa, sizeof(p->isa), "avx512f");
		} else if (has_word(flags, flags_end, "avx2") &&
		           has_word(flags, flags_end, "fma")) {
			p->lanes = 8;
			str_copy(p->isa, sizeof(p->isa), "avx2+fma");
		} else if (has_word(flags, flags_end, "avx")) {
			p->lanes = 8;
			str_copy(p->isa, sizeof(p->isa), "avx");
			fma_note = "x 2 FLOP (a multiply and an add; no FMA)";
		} else if (has_word(flags, flags_end, "sse")) {
			p->lanes = 4;
			str_copy(p->isa, sizeof(p->isa), "sse");
			fma_note = "x 2 FLOP (a multiply and an add; no FMA)";
		}
	} else if (feat && has_word(feat, feat_end, "asimd")) {
		p->lanes = 4;
		str_copy(p->isa, sizeof(p->isa), "neon");
	}

	if (max_khz) {
		p->mhz = (double)max_khz / 1000.0;
		snprintf(p->clock_source, sizeof(p->clock_source), "%s",
		         clock_file ? clock_file : "cpuinfo_max_freq");
	} else if (cpuinfo_mhz > 0) {
		p->mhz = cpuinfo_mhz;
		str_copy(p->clock_source, sizeof(p->clock_source), "cpuinfo \"cpu MHz\"");
	}
	if (p->mhz > 0) {
		p->gflops = p->cpus * p->mhz / 1000.0 * p->lanes * 2.0;
		snprintf(p->how, sizeof(p->how),
		         "%u CPU%s x %.0f MHz (%s) x %u FP32 lane%s (%s) %s = %.1f GFLOP/s",
		         p->cpus, p->cpus == 1 ? "" : "s", p->mhz, p->clock_source, p->lanes,
		         p->lanes == 1 ? "" : "s", p->isa, fma_note, p->gflops);
	} else {
		snprintf(p->how, sizeof(p->how),
		         "unknown: no clock in cpufreq's cpuinfo_max_freq or cpuinfo's \"cpu MHz\" "
		         "(%u CPU%s, %u FP32 lane%s, %s)",
		         p->cpus, p->cpus == 1 ? "" : "s", p->lanes, p->lanes == 1 ? "" : "s",
		         p->isa);
	}
}

/* The first CPU this process may run on, for its cpufreq directory; 0 when it cannot be told. */
static int
first_cpu(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (int i = 0; i < CPU_SETSIZE; i++)
			if (CPU_ISSET(i, &set))
				return i;
	return 0;
}

void
bench_cpu_peak_read(const char *proc_root, const char *sysfs_root, unsigned cpus,
                    struct bench_cpu_peak *p)
{
	struct strbuf sb = STRBUF_INIT;
	uint64_t khz = 0;
	char path[128];

	snprintf(path, sizeof(path), "devices/system/cpu/cpu%d/cpufreq/cpuinfo_max_freq",
	         first_cpu());
	if (file_read_u64(sysfs_root, path, &khz, NULL) < 0)
		khz = 0;
	if (file_read(proc_root, "cpuinfo", &sb, CPUINFO_CAP, NULL) < 0)
		strbuf_reset(&sb);
	bench_cpu_peak_parse(sb.buf, khz, "cpufreq cpuinfo_max_freq", cpus, p);
	strbuf_release(&sb);
}

unsigned
bench_cpus(void)
{
	cpu_set_t set;
	long n;

	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return (unsigned)CPU_COUNT(&set);
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

unsigned long long
bench_mem_available(const char *proc_root)
{
	struct strbuf sb = STRBUF_INIT;
	unsigned long long kb = 0;
	const char *at;

	if (file_read(proc_root, "meminfo", &sb, 16384, NULL) == 0 &&
	    (at = strstr(sb.buf, "MemAvailable:")))
		kb = strtoull(at + strlen("MemAvailable:"), NULL, 10);
	strbuf_release(&sb);
	return kb * 1024;
}
