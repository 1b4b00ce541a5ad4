/*
 * The Prometheus text format of a snapshot: one header per family before
 * its samples, families never split, base units, no sentinels, escaping,
 * a bounded list of processes, and every line parseable. The same in
 * OpenMetrics (counter families without "_total", "# EOF"), the Xid
 * counters, doctor's findings and the exporter's own families. The jobs and
 * pods of the GPUs (gpuscope_gpu_allocation, gpuscope_job_* and
 * gpuscope_pod_*, summed over pids), and dcgm-exporter's names, units and
 * labels (prom_write_dcgm) on NVIDIA, AMD and MIG devices.
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
render_opts(const struct gpu_snapshot *s, const struct prom_opts *o)
{
	static struct strbuf sb = STRBUF_INIT;

	strbuf_reset(&sb);
	prom_write(&sb, s, o);
	return sb.buf;
}

static const char *
render(const struct gpu_snapshot *s, unsigned max_procs)
{
	struct prom_opts o = { max_procs, 0.25, 3, false, NULL, 0, false };

	return render_opts(s, &o);
}

/* The same, in OpenMetrics. */
static const char *
render_om(const struct gpu_snapshot *s, unsigned max_procs)
{
	struct prom_opts o = { max_procs, 0.25, 3, true, NULL, 0, false };

	return render_opts(s, &o);
}

/* The same, under dcgm-exporter's names. */
static const char *
render_dcgm(const struct gpu_snapshot *s)
{
	static struct strbuf sb = STRBUF_INIT;

	strbuf_reset(&sb);
	prom_write_dcgm(&sb, s);
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
/* dcgm-exporter's counters do not end in "_total" (the text format 0.0.4 allows that) */
static bool counters_any_name;

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
			if (strstr(line + 7, " counter") && !counters_any_name &&
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

/* Whether the HELP text s is escaped as OpenMetrics wants: no raw '"', only \\, \n and \". */
static bool
om_help_ok(const char *s)
{
	for (; *s; s++) {
		if (*s == '"')
			return false;
		if (*s == '\\') {
			if (s[1] != '\\' && s[1] != 'n' && s[1] != '"')
				return false;
			s++;
		}
	}
	return true;
}

/*
 * Check an OpenMetrics exposition: the text ends with exactly one "# EOF"
 * line; every other line a HELP, TYPE or sample that parse_sample() reads;
 * HELP then TYPE once per family, before its samples; a counter family
 * named without "_total" and its samples with it; a gauge's samples named
 * as the family. Returns the number of problems (diag() says which).
 */
static int
check_om(const char *text, int *families)
{
	char *copy = xstrdup(text), *save = NULL;
	char seen[256][128];
	int nr_seen = 0, bad = 0;
	char cur[128] = "", cur_type[16] = "", pending_help[128] = "";
	size_t len = strlen(text);
	bool eof = false;

	*families = 0;
	if (len < 6 || strcmp(text + len - 6, "# EOF\n")) {
		diag("does not end with \"# EOF\\n\"");
		bad++;
	}
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[128], want[160];
		double v;

		if (eof) {
			diag("a line after # EOF: %s", line);
			bad++;
			continue;
		}
		if (!strcmp(line, "# EOF")) {
			eof = true;
			continue;
		}
		if (!strncmp(line, "# HELP ", 7) || !strncmp(line, "# TYPE ", 7)) {
			bool help = line[2] == 'H';
			const char *rest;

			line_name(line + 7, name, sizeof(name));
			rest = line + 7 + strlen(name);
			if (!valid_name(name, false) || *rest != ' ') {
				diag("bad metadata line: %s", line);
				bad++;
				continue;
			}
			if (help) {
				for (int i = 0; i < nr_seen; i++)
					if (!strcmp(seen[i], name)) {
						diag("family %s has a second HELP", name);
						bad++;
					}
				if (!om_help_ok(rest + 1)) {
					diag("HELP of %s not escaped for OpenMetrics: %s", name,
					     rest + 1);
					bad++;
				}
				str_copy(pending_help, sizeof(pending_help), name);
				continue;
			}
			if (strcmp(pending_help, name)) {
				diag("TYPE of %s without its HELP just before", name);
				bad++;
			}
			if (strcmp(rest, " gauge") && strcmp(rest, " counter")) {
				diag("bad TYPE line: %s", line);
				bad++;
			}
			if (!strcmp(rest, " counter") && strlen(name) >= 6 &&
			    !strcmp(name + strlen(name) - 6, "_total")) {
				diag("counter family %s is named with _total", name);
				bad++;
			}
			if (nr_seen < 256)
				str_copy(seen[nr_seen++], sizeof(seen[0]), name);
			str_copy(cur, sizeof(cur), name);
			str_copy(cur_type, sizeof(cur_type), rest + 1);
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
		snprintf(want, sizeof(want), "%s%s", cur,
		         strcmp(cur_type, "counter") ? "" : "_total");
		if (strcmp(name, want)) {
			diag("sample %s outside its family (current %s, %s)", name, cur, cur_type);
			bad++;
		}
		if (!strcmp(cur_type, "counter") && !(v >= 0)) {
			diag("counter sample %s not >= 0: %s", name, line);
			bad++;
		}
	}
	if (!eof) {
		diag("no # EOF line");
		bad++;
	}
	free(copy);
	return bad;
}

/* The sample lines of an exposition (comments left out), into sb. */
static void
samples_only(struct strbuf *sb, const char *text)
{
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p + 1) : strlen(p);

		if (*p != '#')
			strbuf_add(sb, p, n);
		p += n;
	}
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
	char *text;
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
	   "throttle reasons: 0/1 for each supported one only");
	ok(strstr(out, "# TYPE gpuscope_gpu_throttle_reason gauge\n") &&
	           count(out, "\ngpuscope_gpu_throttle_reason{gpu=\"0\"") == 2 &&
	           !strstr(out, "clock_event_reason"),
	   "throttle reasons are gpuscope_gpu_throttle_reason (not clock_event_reason)");
	ok(strstr(out, "# HELP gpuscope_build_info ") &&
	           strstr(out, "# TYPE gpuscope_build_info gauge\n"
	                       "gpuscope_build_info{version=\"" GPUSCOPE_VERSION "\"} 1\n"),
	   "gpuscope_build_info{version} 1");
	ok(strstr(out, "# TYPE gpuscope_gpus gauge\ngpuscope_gpus 2\n") != NULL,
	   "gpuscope_gpus counts the GPUs");
	ok(!strstr(out, "# EOF"), "the text format has no # EOF");
	ok(!strstr(out, "xid_errors"), "no Xid family when no GPU's Xids are watched");
	ok(!strstr(out, "gpuscope_finding"), "no finding family before doctor has run");
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
	text = xstrdup(out);

	/* the OpenMetrics check itself: it sees what it is meant to */
	out = "# HELP x a \\\"q\\\" \\\\ \\n\n# TYPE x counter\nx_total 1\n# EOF\n";
	ok(check_om(out, &fams) == 0, "check_om accepts a well-formed counter");
	diag("check_om on bad inputs (problems expected):");
	ok(check_om("# HELP x_total h\n# TYPE x_total counter\nx_total 1\n", &fams) == 4,
	   "check_om: no # EOF (twice: end, line), a counter family with _total, its sample");
	ok(check_om("# HELP x a \"q\"\n# TYPE x gauge\nx 1\n# EOF\n# EOF\n", &fams) == 2,
	   "check_om: a raw quote in HELP, a line after # EOF");

	/* the same snapshot in OpenMetrics */
	out = render_om(&s, 0);
	bad = check_om(out, &fams);
	ok(bad == 0, "OpenMetrics: well-formed, every line parses (%d problems)", bad);
	ok(strlen(out) >= 6 && !strcmp(out + strlen(out) - 6, "# EOF\n") &&
	           count(out, "# EOF") == 1,
	   "OpenMetrics: ends with exactly one # EOF line");
	ok(strstr(out, "# HELP gpuscope_gpu_energy_joules ") &&
	           strstr(out, "# TYPE gpuscope_gpu_energy_joules counter\n") &&
	           !strstr(out, "# TYPE gpuscope_gpu_energy_joules_total") &&
	           !strstr(out, "# HELP gpuscope_gpu_energy_joules_total") &&
	           strstr(out, "\ngpuscope_gpu_energy_joules_total{gpu=\"0\""),
	   "OpenMetrics: a counter family is named without _total, its samples with it");
	ok(strstr(out, "# TYPE gpuscope_collect_errors counter\n"
	               "gpuscope_collect_errors_total 3\n") != NULL,
	   "OpenMetrics: the exporter's own counter too");
	ok(strstr(out, "# TYPE gpuscope_gpu_ecc_errors_corrected_volatile counter\n") != NULL,
	   "OpenMetrics: the ECC counter family");
	ok(strstr(out, "# TYPE gpuscope_gpu_memory_used_bytes gauge\n") &&
	           strstr(out, "# TYPE gpuscope_build_info gauge\n") &&
	           strstr(out, "# TYPE gpuscope_gpus gauge\ngpuscope_gpus 2\n"),
	   "OpenMetrics: gauges keep their names");
	{
		/* the samples are the same in both formats: only metadata lines differ */
		struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;

		samples_only(&a, text);
		samples_only(&b, out);
		ok(a.len > 0 && !strcmp(a.buf, b.buf), "OpenMetrics: the same samples as the text");
		strbuf_release(&a);
		strbuf_release(&b);
	}
	{
		struct strbuf sb = STRBUF_INIT;

		prom_write(&sb, &s, NULL);
		ok(sb.buf && !strstr(sb.buf, "# EOF") && strstr(sb.buf, "gpuscope_gpus 2\n") &&
		           strstr(sb.buf, "gpuscope_collect_errors_total 0\n") &&
		           !strstr(sb.buf, "gpuscope_collect_duration_seconds"),
		   "no options: the text format, no collection time, 0 errors");
		strbuf_release(&sb);
	}
	free(text);
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
	/* every field is one family, except the reason mask pair (one family); plus build_info,
	 * gpus, info, up, collect duration, collect errors */
	is_int(fams, GF__COUNT - 1 + 6, "a family for every field");
	out = render_om(&s, 0);
	bad = check_om(out, &fams);
	ok(bad == 0, "all fields, OpenMetrics: well-formed (%d problems)", bad);
	is_int(fams, GF__COUNT - 1 + 6, "OpenMetrics: the same families");
	gpu_snapshot_release(&s);

	/* no GPU at all */
	gpu_snapshot_init(&s);
	out = render(&s, 5);
	ok(check_structure(out, &fams) == 0 && strstr(out, "\ngpuscope_gpus 0\n") &&
	           !strstr(out, "gpuscope_gpu_"),
	   "no GPU: gpuscope_gpus 0 and no per-GPU family");
	out = render_om(&s, 5);
	ok(check_om(out, &fams) == 0 && strstr(out, "\ngpuscope_gpus 0\n"),
	   "no GPU, OpenMetrics: well-formed");
	gpu_snapshot_release(&s);

	/* Xid errors: per code, only on the GPUs whose Xids are watched */
	gpu_snapshot_init(&s);
	d = add_gpu(&s, 0, "a");
	d->xid_watched = true;
	d->xid[0].xid = 79;
	d->xid[0].count = 2;
	d->xid[1].xid = 48;
	d->xid[1].count = 1;
	d->nr_xid = 2;
	d = add_gpu(&s, 1, "b"); /* watched, none yet */
	d->xid_watched = true;
	d = add_gpu(&s, 2, "c"); /* not watched: whatever is in xid[] is not exported */
	d->xid[0].xid = 13;
	d->xid[0].count = 5;
	d->nr_xid = 1;
	d = add_gpu(&s, 3, "d"); /* watched, lost: its Xids (79 is "fallen off the bus") stay */
	d->xid_watched = true;
	d->state = DEV_LOST;
	d->xid[0].xid = 79;
	d->xid[0].count = 1;
	d->nr_xid = 1;
	out = render(&s, 0);
	ok(check_structure(out, &fams) == 0, "Xid output is well-formed");
	ok(count(out, "# TYPE gpuscope_gpu_xid_errors_total counter\n") == 1,
	   "Xid: one counter family");
	is_int(count(out, "\ngpuscope_gpu_xid_errors_total{"), 3, "Xid: a sample per GPU and code");
	ok(strstr(out, "gpuscope_gpu_xid_errors_total{gpu=\"0\",uuid=\"GPU-00000000-aaaa\","
	               "pci_bus_id=\"00000000:01:00.0\",name=\"a\",vendor=\"nvidia\","
	               "driver=\"nvidia\",xid=\"79\"} 2\n") &&
	           strstr(out, "name=\"a\",vendor=\"nvidia\",driver=\"nvidia\",xid=\"48\"} 1\n"),
	   "Xid: the GPU's labels, the code in xid, the count as the value");
	ok(!strstr(out, "xid=\"13\"") && !strstr(out, "gpuscope_gpu_xid_errors_total{gpu=\"1\"") &&
	           !strstr(out, "gpuscope_gpu_xid_errors_total{gpu=\"2\""),
	   "Xid: none for a GPU not watched, nor for a watched GPU without any");
	ok(strstr(out, "gpuscope_gpu_xid_errors_total{gpu=\"3\"") != NULL,
	   "Xid: a lost GPU keeps its Xid counts");
	out = render_om(&s, 0);
	ok(check_om(out, &fams) == 0 && strstr(out, "# TYPE gpuscope_gpu_xid_errors counter\n") &&
	           count(out, "\ngpuscope_gpu_xid_errors_total{") == 3,
	   "Xid, OpenMetrics: family without _total, samples with it");
	/* more codes than the table holds: bounded */
	d = &s.dev[0];
	for (unsigned k = 0; k < GPU_MAX_XID; k++) {
		d->xid[k].xid = 100 + k;
		d->xid[k].count = k + 1;
	}
	d->nr_xid = GPU_MAX_XID + 5;
	out = render(&s, 0);
	ok(check_structure(out, &fams) == 0 &&
	           count(out, "\ngpuscope_gpu_xid_errors_total{gpu=\"0\"") == GPU_MAX_XID,
	   "Xid: nr_xid past GPU_MAX_XID reads no further than the table");
	for (size_t i = 0; i < s.nr_dev; i++)
		s.dev[i].xid_watched = false;
	out = render(&s, 0);
	ok(!strstr(out, "xid_errors"), "Xid: no family at all when none is watched");
	gpu_snapshot_release(&s);

	/* doctor's findings */
	gpu_snapshot_init(&s);
	add_gpu(&s, 0, "a");
	{
		static const struct prom_finding fnd[] = {
			{ "nvidia.xid", "error", 2 },
			{ "health.thermal", "warning", 1 },
			{ "odd\"id", "info", 3 },
		};
		struct prom_opts o = { 0, 0.25, 3, false, fnd, 3, true };

		out = render_opts(&s, &o);
		ok(check_structure(out, &fams) == 0, "findings output is well-formed");
		ok(strstr(out, "# HELP gpuscope_finding ") &&
		           strstr(out,
		                  "# TYPE gpuscope_finding gauge\n"
		                  "gpuscope_finding{id=\"nvidia.xid\",severity=\"error\"} 2\n"
		                  "gpuscope_finding{id=\"health.thermal\",severity=\"warning\"} "
		                  "1\n"),
		   "findings: a gauge per id and severity, the count as the value");
		ok(strstr(out, "gpuscope_finding{id=\"odd\\\"id\",severity=\"info\"} 3\n") != NULL,
		   "findings: the id escaped as a label value");
		o.openmetrics = true;
		out = render_opts(&s, &o);
		ok(check_om(out, &fams) == 0 && count(out, "\ngpuscope_finding{") == 3,
		   "findings, OpenMetrics: well-formed");

		/* doctor ran and found nothing: the family without samples */
		o.openmetrics = false;
		o.nr_findings = 0;
		out = render_opts(&s, &o);
		ok(check_structure(out, &fams) == 0 &&
		           count(out, "# HELP gpuscope_finding ") == 1 &&
		           count(out, "# TYPE gpuscope_finding gauge\n") == 1 &&
		           !strstr(out, "\ngpuscope_finding{") &&
		           !strstr(out, "\ngpuscope_finding "),
		   "no findings: HELP and TYPE, no sample");
		o.openmetrics = true;
		out = render_opts(&s, &o);
		ok(check_om(out, &fams) == 0 &&
		           count(out, "# TYPE gpuscope_finding gauge\n") == 1 &&
		           !strstr(out, "\ngpuscope_finding{"),
		   "no findings, OpenMetrics: HELP and TYPE, no sample, well-formed");

		/* doctor has not run: findings given are not written */
		o.openmetrics = false;
		o.nr_findings = 3;
		o.findings_known = false;
		out = render_opts(&s, &o);
		ok(!strstr(out, "gpuscope_finding"), "findings not known: no family at all");
	}
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
	out = render_om(&s, 10);
	ok(check_om(out, &fams) == 0, "processes, OpenMetrics: well-formed");
	gpu_snapshot_release(&s);

	/* attribution: the jobs and pods on each GPU, and their memory summed over their pids */
	gpu_snapshot_init(&s);
	add_gpu(&s, 0, "a");
	d = add_gpu(&s, 1, "b");
	str_copy(d->alloc_namespace, sizeof(d->alloc_namespace), "ml");
	str_copy(d->alloc_pod, sizeof(d->alloc_pod), "idle-0");
	str_copy(d->alloc_container, sizeof(d->alloc_container), "worker");
	add_gpu(&s, 2, "c");
	add_proc(&s, 0, 100, 1e9, -1);
	s.proc[0].slurm_job = xstrdup("77");
	add_proc(&s, 0, 101, 2e9, -1);
	s.proc[1].slurm_job = xstrdup("77");
	add_proc(&s, 0, 101, 2e9, -1); /* the same process listed twice: counted once */
	s.proc[2].slurm_job = xstrdup("77");
	add_proc(&s, 0, 102, 4e9, -1);
	s.proc[3].slurm_job = xstrdup("78");
	add_proc(&s, 2, 200, 8e9, -1);
	s.proc[4].pod_namespace = xstrdup("ml");
	s.proc[4].pod_name = xstrdup("train-0");
	s.proc[4].container_name = xstrdup("trainer");
	add_proc(&s, 2, 201, -1, -1); /* of unknown memory: counted, adds nothing */
	s.proc[5].pod_namespace = xstrdup("ml");
	s.proc[5].pod_name = xstrdup("train-0");
	s.proc[5].container_name = xstrdup("trainer");
	add_proc(&s, 2, 202, 1e9, -1); /* no job, no pod: in no group */
	out = render(&s, 0);
	ok(check_structure(out, &fams) == 0, "attribution output is well-formed");
	ok(strstr(out, "\ngpuscope_job_gpu_memory_bytes{gpu=\"0\",uuid=\"GPU-00000000-aaaa\","
	               "hpc_job=\"77\"} 3000000000\n") &&
	           strstr(out, "\ngpuscope_job_gpu_memory_bytes{gpu=\"0\",uuid=\"GPU-00000000-"
	                       "aaaa\",hpc_job=\"78\"} 4000000000\n") &&
	           count(out, "\ngpuscope_job_gpu_memory_bytes{") == 2,
	   "job memory: one series per job and GPU, summed over its processes");
	ok(strstr(out, "\ngpuscope_job_gpu_processes{gpu=\"0\",uuid=\"GPU-00000000-aaaa\","
	               "hpc_job=\"77\"} 2\n") != NULL,
	   "job processes: a process listed twice counts once");
	ok(strstr(out, "\ngpuscope_pod_gpu_memory_bytes{gpu=\"2\",uuid=\"GPU-00000002-aaaa\","
	               "namespace=\"ml\",pod=\"train-0\",container=\"trainer\"} 8000000000\n") &&
	           strstr(out, "\ngpuscope_pod_gpu_processes{gpu=\"2\",uuid=\"GPU-00000002-aaaa\","
	                       "namespace=\"ml\",pod=\"train-0\",container=\"trainer\"} 2\n") &&
	           count(out, "\ngpuscope_pod_gpu_memory_bytes{") == 1,
	   "pod memory and processes: one series per container and GPU");
	ok(strstr(out, "\ngpuscope_gpu_allocation{gpu=\"1\",uuid=\"GPU-00000001-aaaa\","
	               "namespace=\"ml\",pod=\"idle-0\",container=\"worker\","
	               "source=\"pod-resources\"} 1\n") &&
	           strstr(out, "\ngpuscope_gpu_allocation{gpu=\"0\",uuid=\"GPU-00000000-aaaa\","
	                       "hpc_job=\"78\",source=\"process\"} 1\n") &&
	           strstr(out, "\ngpuscope_gpu_allocation{gpu=\"2\",uuid=\"GPU-00000002-aaaa\","
	                       "namespace=\"ml\",pod=\"train-0\",container=\"trainer\","
	                       "source=\"process\"} 1\n") &&
	           count(out, "\ngpuscope_gpu_allocation{") == 4,
	   "allocation: the jobs and pods of the processes, the kubelet's pod of an idle GPU");
	ok(count(out, "\ngpuscope_process_gpu_memory_bytes{") == 0,
	   "per-pid series stay as --processes says (0: none)");
	out = render_om(&s, 0);
	ok(check_om(out, &fams) == 0, "attribution, OpenMetrics: well-formed");

	/* dcgm names: the labels of every GPU series carry the job or pod, once per job/pod */
	out = render_dcgm(&s);
	ok(count(out, "\nDCGM_FI_DEV_") == 0, "dcgm: nothing known, no sample");
	for (size_t i = 0; i < s.nr_dev; i++)
		dev_set(&s.dev[i], GF_UTIL_GPU, 50);
	out = render_dcgm(&s);
	ok(strstr(out, "\nDCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-00000000-aaaa\","
	               "pci_bus_id=\"00000000:01:00.0\",device=\"nvidia0\",modelName=\"a\","
	               "hpc_job=\"77\"} 50\n") &&
	           strstr(out, "hpc_job=\"78\"} 50\n") &&
	           strstr(out, "\nDCGM_FI_DEV_GPU_UTIL{gpu=\"1\",UUID=\"GPU-00000001-aaaa\","
	                       "pci_bus_id=\"00000000:02:00.0\",device=\"nvidia1\",modelName=\"b\","
	                       "container=\"worker\",namespace=\"ml\",pod=\"idle-0\"} 50\n") &&
	           strstr(out, ",container=\"trainer\",namespace=\"ml\",pod=\"train-0\"} 50\n") &&
	           count(out, "\nDCGM_FI_DEV_GPU_UTIL{") == 4,
	   "dcgm: hpc_job and pod labels on the GPU series, one series per job or pod");
	gpu_snapshot_release(&s);

	/* dcgm names: names, types, units and labels */
	gpu_snapshot_init(&s);
	str_copy(s.hostname, sizeof(s.hostname), "node1");
	str_copy(s.nvidia.driver_version, sizeof(s.nvidia.driver_version), "590.48.01");
	d = add_gpu(&s, 0, "NVIDIA H100");
	dev_set(d, GF_MEM_USED, 40000.0 * 1048576);
	dev_set(d, GF_MEM_FREE, 1024.0 * 1048576);
	dev_set(d, GF_CLOCK_SM, 1755);
	dev_set(d, GF_POWER_DRAW, 300.5);
	dev_set(d, GF_ENERGY, 1234.5);
	dev_set(d, GF_TEMP_GPU, 50);
	dev_set(d, GF_UTIL_GPU, 37);
	dev_set(d, GF_PROF_TENSOR_ACTIVE, 42);
	dev_set(d, GF_VIOL_POWER, 1.5);
	dev_set(d, GF_REMAP_FAILURE, 1);
	dev_set(d, GF_ECC_CORR_VOLATILE, 3);
	d->xid_watched = true;
	d = add_gpu(&s, 1, "Radeon");
	d->vendor = VENDOR_AMD;
	str_copy(d->card, sizeof(d->card), "card1");
	dev_set(d, GF_CLOCK_GRAPHICS, 2100); /* no SM clock: the graphics clock stands in */
	dev_set(d, GF_POWER_AVERAGE, 200);   /* no power draw: the average stands in */
	dev_set(d, GF_RAS_CORR, 4);          /* AMD's RAS counts for the ECC counters */
	d = add_gpu(&s, 2, "lost");
	d->state = DEV_LOST;
	dev_set(d, GF_UTIL_GPU, 99);
	out = render_dcgm(&s);
	{
		const char *l0 =
		        "{gpu=\"0\",UUID=\"GPU-00000000-aaaa\",pci_bus_id=\"00000000:01:00.0\","
		        "device=\"nvidia0\",modelName=\"NVIDIA H100\",Hostname=\"node1\","
		        "DCGM_FI_DRIVER_VERSION=\"590.48.01\"}";
		char want[512];

		counters_any_name = true;
		ok(check_structure(out, &fams) == 0, "dcgm: well-formed exposition");
		counters_any_name = false;
		snprintf(want, sizeof(want), "\nDCGM_FI_DEV_FB_USED%s 40000\n", l0);
		ok(strstr(out, want) != NULL, "dcgm: FB_USED in MiB, with dcgm-exporter's labels");
		snprintf(want, sizeof(want), "\nDCGM_FI_DEV_FB_FREE%s 1024\n", l0);
		ok(strstr(out, want) != NULL, "dcgm: FB_FREE in MiB");
		snprintf(want, sizeof(want), "\nDCGM_FI_DEV_SM_CLOCK%s 1755\n", l0);
		ok(strstr(out, want) != NULL, "dcgm: SM clock in MHz");
		snprintf(want, sizeof(want), "\nDCGM_FI_DEV_POWER_USAGE%s 300.5\n", l0);
		ok(strstr(out, want) != NULL, "dcgm: power in W");
		snprintf(want, sizeof(want),
		         "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n"
		         "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION%s 1234500\n",
		         l0);
		ok(strstr(out, want) != NULL, "dcgm: energy a counter in mJ");
		snprintf(want, sizeof(want), "\nDCGM_FI_DEV_GPU_UTIL%s 37\n", l0);
		ok(strstr(out, want) != NULL, "dcgm: GPU_UTIL in %%");
		snprintf(want, sizeof(want),
		         "# TYPE DCGM_FI_PROF_PIPE_TENSOR_ACTIVE gauge\n"
		         "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE%s 0.42\n",
		         l0);
		ok(strstr(out, want) != NULL, "dcgm: PROF ratios 0-1");
		snprintf(want, sizeof(want), "\nDCGM_FI_DEV_POWER_VIOLATION%s 1500000000\n", l0);
		ok(strstr(out, want) != NULL, "dcgm: violation time in ns");
		snprintf(want, sizeof(want), "\nDCGM_FI_DEV_ROW_REMAP_FAILURE%s 1\n", l0);
		ok(strstr(out, want) != NULL, "dcgm: row remap failure 0/1");
		snprintf(want, sizeof(want),
		         "# TYPE DCGM_FI_DEV_XID_ERRORS gauge\nDCGM_FI_DEV_XID_ERRORS%s 0\n", l0);
		ok(strstr(out, want) != NULL, "dcgm: XID_ERRORS 0 before any Xid, where watched");
		ok(strstr(out,
		          "\nDCGM_FI_DEV_SM_CLOCK{gpu=\"1\",UUID=\"GPU-00000001-aaaa\","
		          "pci_bus_id=\"00000000:02:00.0\","
		          "device=\"card1\",modelName=\"Radeon\",Hostname=\"node1\"} 2100\n") &&
		           strstr(out, "\nDCGM_FI_DEV_POWER_USAGE{gpu=\"1\",") &&
		           strstr(out,
		                  "device=\"card1\",modelName=\"Radeon\",Hostname=\"node1\"} 4\n"),
		   "dcgm: AMD under the same names, its DRM card as device, no driver version");
		ok(!strstr(out, "\nDCGM_FI_DEV_MEM_CLOCK") &&
		           !strstr(out, "\nDCGM_FI_DEV_MEMORY_TEMP") && !strstr(out, "gpu=\"2\"") &&
		           !strstr(out, "gpuscope_"),
		   "dcgm: unknown readings and a lost GPU have no sample, no gpuscope family");
		ok(count(out, "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n") == 1 &&
		           count(out, "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n") == 1,
		   "dcgm: dcgm-exporter's HELP and TYPE");
		s.dev[0].xid[0].xid = 13;
		s.dev[0].xid[0].count = 2;
		s.dev[0].xid[1].xid = 79;
		s.dev[0].xid[1].count = 1;
		s.dev[0].nr_xid = 2;
		s.dev[0].xid_last = 79;
		out = render_dcgm(&s);
		snprintf(want, sizeof(want), "\nDCGM_FI_DEV_XID_ERRORS%s 79\n", l0);
		ok(strstr(out, want) != NULL, "dcgm: XID_ERRORS the last Xid code");
		/* 13 again after 79: the newest, though first seen before */
		s.dev[0].xid[0].count = 3;
		s.dev[0].xid_last = 13;
		out = render_dcgm(&s);
		snprintf(want, sizeof(want), "\nDCGM_FI_DEV_XID_ERRORS%s 13\n", l0);
		ok(strstr(out, want) != NULL,
		   "dcgm: XID_ERRORS the newest code, not the last first seen");
	}

	/* dcgm names: a MIG device is labelled with its parent and its GPU instance */
	d = gpu_snapshot_add_dev(&s);
	d->index = 0;
	d->vendor = VENDOR_NVIDIA;
	d->is_mig = true;
	d->mig_parent = 0;
	d->mig_gi = 3;
	str_copy(d->mig_profile, sizeof(d->mig_profile), "1g.10gb");
	str_copy(d->uuid, sizeof(d->uuid), "MIG-0000");
	dev_set(d, GF_MEM_USED, 512.0 * 1048576);
	out = render_dcgm(&s);
	ok(strstr(out, "\nDCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-00000000-aaaa\","
	               "pci_bus_id=\"00000000:01:00.0\",device=\"nvidia0\","
	               "modelName=\"NVIDIA H100\",GPU_I_PROFILE=\"1g.10gb\",GPU_I_ID=\"3\","
	               "Hostname=\"node1\",DCGM_FI_DRIVER_VERSION=\"590.48.01\"} 512\n") != NULL,
	   "dcgm: MIG instance: the parent's gpu, UUID and model, GPU_I_PROFILE and GPU_I_ID");
	gpu_snapshot_release(&s);

	/* gpuscope names: a GPU with a MIG device, and a process on it */
	gpu_snapshot_init(&s);
	add_gpu(&s, 0, "NVIDIA H100");
	d = gpu_snapshot_add_dev(&s);
	d->index = 1; /* MIG device 1 of GPU 0: still gpu="0" */
	d->vendor = VENDOR_NVIDIA;
	d->is_mig = true;
	d->mig_parent = 0;
	d->mig_gi = 3;
	d->mig_ci = 0;
	str_copy(d->mig_profile, sizeof(d->mig_profile), "1g.10gb");
	str_copy(d->uuid, sizeof(d->uuid), "MIG-0000");
	dev_set(d, GF_MEM_USED, 512.0 * 1048576);
	add_proc(&s, 1, 4242, 256.0 * 1048576, 0);
	out = render(&s, 5);
	is_int(count(out, "\ngpuscope_gpus 1\n"), 1,
	       "MIG: gpuscope_gpus counts GPUs, not MIG devices");
	ok(strstr(out, "\ngpuscope_gpu_memory_used_bytes{gpu=\"0\",uuid=\"GPU-00000000-aaaa\","
	               "pci_bus_id=\"00000000:01:00.0\",name=\"NVIDIA H100\",vendor=\"nvidia\","
	               "driver=\"nvidia\",mig_instance=\"3\",mig_compute_instance=\"0\","
	               "mig_profile=\"1g.10gb\",mig_uuid=\"MIG-0000\"} 536870912\n") != NULL,
	   "MIG: a MIG device's series: its GPU's labels, then its instance's");
	ok(strstr(out, "\ngpuscope_process_gpu_memory_bytes{gpu=\"0\",uuid=\"GPU-00000000-aaaa\","
	               "mig_instance=\"3\",mig_compute_instance=\"0\",mig_profile=\"1g.10gb\","
	               "mig_uuid=\"MIG-0000\",pid=\"4242\"") != NULL,
	   "MIG: a process on a MIG device: its GPU, then the instance");
	ok(!strstr(out, "gpu=\"1\""), "MIG: no series names the MIG device's own index as a GPU");
	gpu_snapshot_release(&s);

	/* promtool, when there is one */
	if (system("command -v promtool >/dev/null 2>&1") == 0) {
		FILE *p = popen("promtool check metrics >/dev/null 2>&1", "w");

		gpu_snapshot_init(&s);
		d = add_gpu(&s, 0, "x");
		for (int f = 0; f < GF__COUNT; f++)
			dev_set(d, (enum gpu_field)f, 1);
		add_proc(&s, 0, 100, 1e9, 10);
		s.proc[0].slurm_job = xstrdup("77");
		s.proc[0].pod_namespace = xstrdup("ml");
		s.proc[0].pod_name = xstrdup("train-0");
		s.proc[0].container_name = xstrdup("trainer");
		out = render(&s, 5);
		if (p)
			fputs(out, p);
		ok(p && pclose(p) == 0,
		   "promtool check metrics accepts the output (processes, jobs and pods included)");
		gpu_snapshot_release(&s);
	} else {
		skip_missing("promtool not found (Debian: apt-get install prometheus)");
	}
	done_testing();
}
