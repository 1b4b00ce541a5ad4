/*
 * The Prometheus text format of a snapshot: one header per family before
 * its samples, families never split, base units, no sentinels, escaping,
 * a bounded list of processes, and every line parseable.
 */
#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "front/prom.h"

static struct gpu_device *
add_gpu(struct gpu_snapshot *s, unsigned index, const char *name)
{
	struct gpu_device *d = gpu_snapshot_add_dev(s);
	char buf[64];

	d->index = index;
	d->vendor = VENDOR_NVIDIA;
	str_copy(d->name, sizeof(d->name), name);
	snprintf(buf, sizeof(buf), "GPU-%08u-aaaa", index);
	str_copy(d->uuid, sizeof(d->uuid), buf);
	snprintf(buf, sizeof(buf), "00000000:%02X:00.0", index + 1);
	str_copy(d->pci_bus_id, sizeof(d->pci_bus_id), buf);
	str_copy(d->driver, sizeof(d->driver), "nvidia");
	return d;
}

static void
add_proc(struct gpu_snapshot *s, unsigned dev, uint32_t pid, double mem, double sm)
{
	struct gpu_proc *p = gpu_snapshot_add_proc(s);
	char buf[32];

	p->dev = dev;
	p->pid = pid;
	p->type = PROC_COMPUTE;
	snprintf(buf, sizeof(buf), "cmd%u", (unsigned)pid);
	p->name = xstrdup(buf);
	p->user = xstrdup("alice");
	if (mem >= 0)
		proc_set(p, PF_GPU_MEM, mem);
	if (sm >= 0)
		proc_set(p, PF_SM_UTIL, sm);
}

static const char *
render(const struct gpu_snapshot *s, unsigned max_procs)
{
	static struct strbuf sb = STRBUF_INIT;
	struct prom_opts o = { max_procs, 0.25, 3, false, NULL, 0, false };

	strbuf_reset(&sb);
	prom_write(&sb, s, &o);
	return sb.buf;
}

/* The metric name at the start of a sample line, into buf. */
static void
line_name(const char *line, char *buf, size_t size)
{
	size_t n = strcspn(line, "{ \n");

	if (n >= size)
		n = size - 1;
	memcpy(buf, line, n);
	buf[n] = '\0';
}

static bool
valid_name(const char *s, bool label)
{
	if (!*s || !(isalpha((unsigned char)*s) || *s == '_' || (!label && *s == ':')))
		return false;
	for (s++; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_' || (!label && *s == ':')))
			return false;
	return true;
}

/* Whether line is `name{label="value",...} float`; the value into *v. */
static bool
parse_sample(const char *line, double *v)
{
	char name[256];
	const char *p;
	char *end;

	line_name(line, name, sizeof(name));
	if (!valid_name(name, false))
		return false;
	p = line + strlen(name);
	if (*p == '{') {
		p++;
		for (;;) {
			char lab[128];
			size_t n = strcspn(p, "=");

			if (n == 0 || n >= sizeof(lab))
				return false;
			memcpy(lab, p, n);
			lab[n] = '\0';
			if (!valid_name(lab, true))
				return false;
			p += n + 1;
			if (*p++ != '"')
				return false;
			while (*p && *p != '"' && *p != '\n') {
				if (*p == '\\') {
					if (p[1] != '\\' && p[1] != '"' && p[1] != 'n')
						return false;
					p++;
				}
				p++;
			}
			if (*p++ != '"')
				return false;
			if (*p == ',') {
				p++;
				continue;
			}
			if (*p++ != '}')
				return false;
			break;
		}
	}
	if (*p++ != ' ')
		return false;
	if (!strcmp(p, "NaN") || !strcmp(p, "+Inf") || !strcmp(p, "-Inf")) {
		*v = NAN;
		return true;
	}
	*v = strtod(p, &end);
	return end != p && *end == '\0';
}

/*
 * Check the structure of a whole exposition: every line a HELP, TYPE or
 * sample; HELP then TYPE once per family, before its samples; the samples
 * of a family together. Returns the number of problems (diag() says which).
 */
static int
check_structure(const char *text, int *families)
{
	char *copy = xstrdup(text), *save = NULL;
	char seen[256][128];
	int nr_seen = 0, bad = 0;
	char cur[128] = "", pending_help[128] = "";

	*families = 0;
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[128];
		double v;

		if (!strncmp(line, "# HELP ", 7) || !strncmp(line, "# TYPE ", 7)) {
			bool help = line[2] == 'H';

			line_name(line + 7, name, sizeof(name));
			if (help) {
				for (int i = 0; i < nr_seen; i++)
					if (!strcmp(seen[i], name)) {
						diag("family %s has a second HELP", name);
						bad++;
					}
				str_copy(pending_help, sizeof(pending_help), name);
				continue;
			}
			if (strcmp(pending_help, name)) {
				diag("TYPE of %s without its HELP just before", name);
				bad++;
			}
			if (!strstr(line + 7, " gauge") && !strstr(line + 7, " counter")) {
				diag("bad TYPE line: %s", line);
				bad++;
			}
			if (strstr(line + 7, " counter") &&
			    (strlen(name) < 6 || strcmp(name + strlen(name) - 6, "_total"))) {
				diag("counter %s does not end in _total", name);
				bad++;
			}
			if (nr_seen < 256)
				str_copy(seen[nr_seen++], sizeof(seen[0]), name);
			str_copy(cur, sizeof(cur), name);
			pending_help[0] = '\0';
			(*families)++;
			continue;
		}
		if (line[0] == '#') {
			diag("unexpected comment: %s", line);
			bad++;
			continue;
		}
		if (!parse_sample(line, &v)) {
			diag("unparseable line: %s", line);
			bad++;
			continue;
		}
		line_name(line, name, sizeof(name));
		if (strcmp(name, cur)) {
			diag("sample of %s outside its family (current %s)", name, cur);
			bad++;
		}
	}
	free(copy);
	return bad;
}

static int
count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

int
main(void)
{
	struct gpu_snapshot s;
	struct gpu_device *d;
	const char *out;
	int fams, bad;

	/* two GPUs with a few readings */
	gpu_snapshot_init(&s);
	d = add_gpu(&s, 0, "NVIDIA H100");
	dev_set(d, GF_CLOCK_GRAPHICS, 1410);
	dev_set(d, GF_UTIL_GPU, 37);
	dev_set(d, GF_MEM_USED, 1024);
	dev_set(d, GF_ENERGY, 123456.5);
	dev_set(d, GF_ECC_CORR_VOLATILE, 2);
	dev_set(d, GF_PERSISTENCE, 1);
	dev_set(d, GF_CLOCK_REASONS, CR_SW_POWER_CAP);
	dev_set(d, GF_CLOCK_REASONS_SUPPORTED, CR_SW_POWER_CAP | CR_GPU_IDLE);
	dev_set(d, GF_ENC_LATENCY, 250);
	d = add_gpu(&s, 1, "NVIDIA H100");
	dev_set(d, GF_UTIL_GPU, 100);
	dev_set(d, GF_MEM_USED, 2048);
	/* GF_CLOCK_GRAPHICS unknown here */
	out = render(&s, 0);

	bad = check_structure(out, &fams);
	ok(bad == 0, "well-formed exposition (%d problems)", bad);
	ok(count(out, "# HELP gpuscope_gpu_memory_used_bytes ") == 1, "one HELP per family");
	ok(count(out, "# TYPE gpuscope_gpu_memory_used_bytes gauge\n") == 1, "one TYPE per family");
	ok(count(out, "\ngpuscope_gpu_memory_used_bytes{") == 2, "a sample per GPU");
	ok(strstr(out, "gpuscope_gpu_clock_graphics_hertz{gpu=\"0\",uuid=\"GPU-00000000-aaaa\","
	               "pci_bus_id=\"00000000:01:00.0\",name=\"NVIDIA H100\",vendor=\"nvidia\","
	               "driver=\"nvidia\"} 1410000000\n") != NULL,
	   "MHz exported as Hz, with the GPU labels");
	ok(count(out, "\ngpuscope_gpu_clock_graphics_hertz{") == 1,
	   "an unknown clock is left out, not written as a sentinel");
	ok(strstr(out, "gpuscope_gpu_utilization_gpu_ratio{gpu=\"0\"") &&
	           strstr(out, "driver=\"nvidia\"} 0.37\n") &&
	           strstr(out, "driver=\"nvidia\"} 1\n"),
	   "percent exported as a ratio");
	ok(!strstr(out, "percent"), "no _percent metric");
	ok(strstr(out, "# TYPE gpuscope_gpu_energy_joules_total counter\n") &&
	           strstr(out, "} 123456.5\n"),
	   "energy is a counter in joules ending in _total");
	ok(strstr(out, "# TYPE gpuscope_gpu_ecc_errors_corrected_volatile_total counter\n") != NULL,
	   "ECC count is a counter ending in _total");
	ok(strstr(out, "gpuscope_gpu_encoder_average_latency_seconds{") &&
	           strstr(out, "} 0.00025\n"),
	   "microseconds exported as seconds");
	ok(strstr(out, "reason=\"sw_power_cap\"} 1\n") && strstr(out, "reason=\"gpu_idle\"} 0\n") &&
	           !strstr(out, "reason=\"hw_slowdown\""),
	   "clock event reasons: 0/1 for each supported one only");
	ok(strstr(out, "# TYPE gpuscope_gpu_persistence_mode gauge\n") != NULL,
	   "a boolean is a gauge");
	ok(count(out, "\ngpuscope_gpu_up{") == 2 && count(out, "driver=\"nvidia\"} 1\n") >= 2,
	   "up for each GPU");
	ok(!strstr(out, "gpuscope_gpu_state{"), "no state series when every GPU is ok");
	ok(strstr(out, "gpuscope_collect_duration_seconds 0.25\n") &&
	           strstr(out, "# TYPE gpuscope_collect_errors_total counter\n"
	                       "gpuscope_collect_errors_total 3\n"),
	   "the exporter's own metrics");
	ok(!strstr(out, "gpuscope_process_"), "no process metrics when max_procs is 0");
	gpu_snapshot_release(&s);

	/* escaping, unknown identity left out */
	gpu_snapshot_init(&s);
	d = add_gpu(&s, 0, "odd \"GPU\" \\ with\nnewline");
	d->uuid[0] = '\0';
	d->vendor = VENDOR_UNKNOWN;
	str_copy(d->vbios, sizeof(d->vbios), "96.00.99");
	str_copy(d->architecture, sizeof(d->architecture), "Hopper");
	out = render(&s, 0);
	ok(check_structure(out, &fams) == 0, "escaped output is well-formed");
	ok(strstr(out, "name=\"odd \\\"GPU\\\" \\\\ with\\nnewline\"") != NULL,
	   "quote, backslash and newline escaped in a label value");
	ok(!strstr(out, "uuid=") && !strstr(out, "vendor="), "unknown labels are left out");
	ok(strstr(out, "vbios=\"96.00.99\"") && strstr(out, "architecture=\"Hopper\"") &&
	           strstr(out, "gpuscope_gpu_info{"),
	   "gpu_info carries vbios and architecture");
	gpu_snapshot_release(&s);

	/* a lost GPU: up 0, a state series, no readings even if some were left */
	gpu_snapshot_init(&s);
	d = add_gpu(&s, 0, "good");
	dev_set(d, GF_TEMP_GPU, 40);
	d = add_gpu(&s, 1, "gone");
	d->state = DEV_LOST;
	dev_set(d, GF_TEMP_GPU, 55);
	out = render(&s, 0);
	ok(check_structure(out, &fams) == 0, "lost GPU output is well-formed");
	ok(strstr(out, "name=\"gone\",vendor=\"nvidia\",driver=\"nvidia\"} 0\n") &&
	           strstr(out, "gpuscope_gpu_up{gpu=\"1\""),
	   "a lost GPU is up 0");
	ok(strstr(out, "gpuscope_gpu_state{gpu=\"1\"") && strstr(out, "state=\"lost\"} 1\n") &&
	           count(out, "\ngpuscope_gpu_state{") == 1,
	   "a lost GPU has a state series; an ok one has none");
	ok(count(out, "\ngpuscope_gpu_temperature_gpu_celsius{") == 1 && !strstr(out, "} 55\n"),
	   "a lost GPU has no readings");
	gpu_snapshot_release(&s);

	/* every field known: every family well-formed, counters _total */
	gpu_snapshot_init(&s);
	d = add_gpu(&s, 0, "all");
	for (int f = 0; f < GF__COUNT; f++)
		dev_set(d, (enum gpu_field)f, 1);
	d = add_gpu(&s, 1, "all2");
	for (int f = 0; f < GF__COUNT; f++)
		dev_set(d, (enum gpu_field)f, 2);
	out = render(&s, 0);
	bad = check_structure(out, &fams);
	ok(bad == 0, "all fields: well-formed (%d problems)", bad);
	/* every field is one family, except the reason mask pair (one family); plus info, up,
	 * collect duration, collect errors */
	is_int(fams, GF__COUNT - 1 + 4, "a family for every field");
	gpu_snapshot_release(&s);

	/* processes: top N by GPU memory across all GPUs */
	gpu_snapshot_init(&s);
	add_gpu(&s, 0, "a");
	add_gpu(&s, 1, "b");
	add_proc(&s, 0, 100, 10e9, 50);
	add_proc(&s, 1, 200, 30e9, -1);
	add_proc(&s, 0, 300, 20e9, 5);
	add_proc(&s, 1, 400, 1e9, 90);
	add_proc(&s, 0, 500, -1, 10);
	s.proc[0].container = xstrdup("0123456789ab");
	out = render(&s, 2);
	ok(check_structure(out, &fams) == 0, "process output is well-formed");
	is_int(count(out, "\ngpuscope_process_gpu_memory_bytes{"), 2, "bounded to max_procs");
	ok(strstr(out, "gpuscope_process_gpu_memory_bytes{gpu=\"1\",uuid=\"GPU-00000001-aaaa\","
	               "pid=\"200\",user=\"alice\",command=\"cmd200\"} 30000000000\n") &&
	           strstr(out, "pid=\"300\"") && !strstr(out, "pid=\"100\"") &&
	           !strstr(out, "pid=\"400\""),
	   "the largest users of GPU memory, across GPUs");
	ok(strstr(out, "gpuscope_process_sm_utilization_ratio{gpu=\"0\"") &&
	           strstr(out, "pid=\"300\",user=\"alice\",command=\"cmd300\"} 0.05\n") &&
	           count(out, "\ngpuscope_process_sm_utilization_ratio{") == 1,
	   "SM utilisation as a ratio, only where known");
	out = render(&s, 10);
	is_int(count(out, "\ngpuscope_process_gpu_memory_bytes{"), 4,
	       "a process of unknown memory has no memory sample");
	ok(strstr(out, "container=\"0123456789ab\"} 10000000000\n") != NULL, "container label");
	gpu_snapshot_release(&s);

	/* promtool, when there is one */
	if (system("command -v promtool >/dev/null 2>&1") == 0) {
		FILE *p = popen("promtool check metrics >/dev/null 2>&1", "w");

		gpu_snapshot_init(&s);
		d = add_gpu(&s, 0, "x");
		for (int f = 0; f < GF__COUNT; f++)
			dev_set(d, (enum gpu_field)f, 1);
		out = render(&s, 5);
		if (p) {
			fputs(out, p);
			ok(pclose(p) == 0, "promtool check metrics accepts the output");
		}
		gpu_snapshot_release(&s);
	} else {
		ok(1, "# SKIP promtool not found");
	}
	done_testing();
}
