/*
 * gpuscope specs [NAME]: the GPU spec table built into gpuscope (memory,
 * bandwidth, peak rates, power), all of it or the rows NAME matches, as a
 * table (with each card's FP64:FP32 ratio, cut on consumer cards) or JSON
 * (schema gpuscope.specs/1).
 */
#include "cmd/cmd.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "core/xalloc.h"
#include "fit/fit.h"
#include "core/specs.h"

#define SPECS_SCHEMA "gpuscope.specs/1"

static void
specs_usage(FILE *f)
{
	fputs("usage: gpuscope specs [NAME] [--json]\n"
	      "The GPU spec table gpuscope fit uses: memory as sold and what a program can\n"
	      "allocate of it (GiB), bandwidth, dense peak FP64, FP32, BF16, FP8 and INT8 rates,\n"
	      "the FP64:FP32 ratio (1:64 on most consumer cards), TDP; all rows, or those whose\n"
	      "name has NAME in it (case and punctuation ignored).\n"
	      "  -j, --json          one JSON document (schema gpuscope.specs/1, docs/json-schema.md)\n"
	      "      --sources       each row's source and notes as well\n"
	      "exit status: 0 rows shown, 2 usage error or NAME matches nothing\n",
	      f);
}

/* s lowercased with everything but letters and digits dropped. */
static void
squash(const char *s, char *out, size_t size)
{
	size_t n = 0;

	for (; s && *s && n + 1 < size; s++)
		if (isalnum((unsigned char)*s))
			out[n++] = (char)tolower((unsigned char)*s);
	out[n] = '\0';
}

static bool
row_matches(const struct gpu_spec *g, const char *want)
{
	char a[512], w[128];

	squash(want, w, sizeof(w));
	squash(g->name, a, sizeof(a));
	if (strstr(a, w))
		return true;
	squash(g->aliases, a, sizeof(a));
	if (strstr(a, w))
		return true;
	/* a whole vendor, architecture or kind: "amd", "hopper", "consumer" */
	{
		const char *cols[] = { g->vendor, g->arch, g->kind };

		for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++) {
			squash(cols[i], a, sizeof(a));
			if (cols[i] && !strcmp(a, w))
				return true;
		}
	}
	return false;
}

/* "1:64" from the dense FP64 and FP32 rates; "-" unknown. */
static const char *
fp64_ratio(const struct gpu_spec *g, char *buf, size_t size)
{
	double r;

	if (!(g->fp64 > 0) || !(g->fp32 > 0))
		return "-";
	r = g->fp32 / g->fp64;
	if (r < 1.25)
		snprintf(buf, size, "1:1");
	else
		snprintf(buf, size, "1:%.0f", r);
	return buf;
}

static void
rate(struct strbuf *sb, double v, int width)
{
	if (isfinite(v) && v > 0)
		strbuf_addf(sb, " %*.*f", width, v < 10 ? 1 : 0, v);
	else
		strbuf_addf(sb, " %*s", width, "-");
}

/* What a program can allocate, GiB, one decimal; "*" after it when the total is a capture. */
static void
alloc(struct strbuf *sb, const struct gpu_spec *g)
{
	double u = gpu_spec_usable_bytes(g);

	if (isfinite(u) && u > 0)
		strbuf_addf(sb, " %5.1f%c", u / 1073741824.0, g->mem_measured ? '*' : ' ');
	else
		strbuf_addf(sb, " %6s", "-");
}

static void
json_row(struct fit_jw *jw, const struct gpu_spec *g)
{
	char buf[16];

	fit_jw_open(jw, NULL, '{');
	fit_jw_str(jw, "name", g->name);
	fit_jw_str(jw, "vendor", g->vendor);
	fit_jw_str(jw, "arch", g->arch);
	fit_jw_str(jw, "kind", g->kind);
	/* memory_gb is the size as sold, which vendors count in GiB: the same number */
	fit_jw_num(jw, "memory_gb", g->mem_gib, 1);
	fit_jw_num(jw, "memory_gib", g->mem_gib, 1);
	fit_jw_num(jw, "memory_bytes", g->mem_bytes, 0);
	if (isfinite(g->mem_bytes))
		fit_jw_bool(jw, "memory_bytes_measured", g->mem_measured);
	else
		fit_jw_null(jw, "memory_bytes_measured");
	fit_jw_num(jw, "memory_reserved_bytes", gpu_spec_reserved_bytes(g), 0);
	fit_jw_num(jw, "memory_cuda_bytes", gpu_spec_cuda_total_bytes(g), 0);
	fit_jw_num(jw, "memory_usable_bytes", gpu_spec_usable_bytes(g), 0);
	fit_jw_str(jw, "memory_type", g->mem_type);
	fit_jw_num(jw, "bandwidth_gbs", g->mem_bw_gbs, 1);
	fit_jw_num(jw, "fp64_tflops", g->fp64, 2);
	fit_jw_num(jw, "fp64_tensor_tflops", g->fp64_tensor, 2);
	fit_jw_num(jw, "fp32_tflops", g->fp32, 2);
	fit_jw_num(jw, "tf32_tflops", g->tf32, 2);
	fit_jw_num(jw, "fp16_tflops", g->fp16, 2);
	fit_jw_num(jw, "bf16_tflops", g->bf16, 2);
	fit_jw_num(jw, "fp8_tflops", g->fp8, 2);
	fit_jw_num(jw, "int8_tops", g->int8, 2);
	fit_jw_num(jw, "fp4_tflops", g->fp4, 2);
	const char *r = fp64_ratio(g, buf, sizeof(buf));
	fit_jw_str(jw, "fp64_fp32_ratio", strcmp(r, "-") ? r : NULL);
	fit_jw_num(jw, "tdp_w", g->tdp_w, 0);
	fit_jw_num(jw, "pcie_gen", g->pcie_gen ? g->pcie_gen : NAN, 0);
	fit_jw_num(jw, "pcie_width", g->pcie_width ? g->pcie_width : NAN, 0);
	fit_jw_str(jw, "source", g->source);
	fit_jw_str(jw, "notes", g->notes && *g->notes ? g->notes : NULL);
	fit_jw_close(jw, '}');
}

int
cmd_specs(int argc, char **argv, struct gs_config *cfg)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "sources", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct gpu_spec *rows;
	struct strbuf out = STRBUF_INIT;
	const char *want = NULL;
	bool json = false, sources = false;
	size_t n, shown = 0;
	struct fit_jw jw;
	int c, rc;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 's':
			sources = true;
			break;
		default:
			rc = cmd_common_option(c, argv, cfg, NULL, specs_usage);
			if (rc != CMD_NEXT_OPTION)
				return rc;
		}
	}
	if (optind < argc)
		want = argv[optind++];
	if (optind < argc) {
		cmd_error("unexpected argument '%s' (one NAME; quote one with spaces)",
		          argv[optind]);
		return EXIT_USAGE;
	}
	n = gpu_specs(&rows);
	if (json) {
		fit_jw_begin(&jw, &out);
		fit_jw_str(&jw, "schema", SPECS_SCHEMA);
		fit_jw_open(&jw, "gpus", '[');
	} else {
		strbuf_addf(&out,
		            "%-28s %-7s %-10s %7s %6s %-7s %6s %6s %6s %-6s %6s %6s %6s %5s\n",
		            "GPU", "VENDOR", "ARCH", "MEM GiB", "ALLOC", "TYPE", "GB/s", "FP64",
		            "FP32", "64:32", "BF16", "FP8", "INT8", "TDP W");
	}
	for (size_t i = 0; i < n; i++) {
		const struct gpu_spec *g = &rows[i];
		char buf[16];

		if (want && !row_matches(g, want))
			continue;
		shown++;
		if (json) {
			json_row(&jw, g);
			continue;
		}
		strbuf_addf(&out, "%-28.28s %-7.7s %-10.10s", g->name, g->vendor ? g->vendor : "-",
		            g->arch ? g->arch : "-");
		rate(&out, g->mem_gib, 7);
		alloc(&out, g);
		strbuf_addf(&out, " %-7.7s", g->mem_type && *g->mem_type ? g->mem_type : "-");
		rate(&out, g->mem_bw_gbs, 6);
		rate(&out, g->fp64, 6);
		rate(&out, g->fp32, 6);
		strbuf_addf(&out, " %-6s", fp64_ratio(g, buf, sizeof(buf)));
		rate(&out, g->bf16, 6);
		rate(&out, g->fp8, 6);
		rate(&out, g->int8, 6);
		rate(&out, g->tdp_w, 5);
		strbuf_addch(&out, '\n');
		if (sources)
			strbuf_addf(&out, "    source: %s%s%s\n", g->source ? g->source : "-",
			            g->notes && *g->notes ? "; " : "", g->notes ? g->notes : "");
	}
	if (json) {
		fit_jw_close(&jw, ']');
		fit_jw_end(&jw);
	} else {
		strbuf_addstr(&out,
		              "(MEM GiB as sold; ALLOC GiB what a PyTorch program can allocate: "
		              "the driver's total, * a real capture,\n less its reserve and a "
		              "CUDA context; dense peak TFLOPS, TOPS for INT8, without sparsity;\n"
		              " 64:32 is FP64:FP32 without tensor cores)\n");
	}
	if (want && !shown) {
		const struct gpu_spec *close[5];
		size_t nr_close = 0;
		struct strbuf sb = STRBUF_INIT;

		gpu_spec_find(want, close, 5, &nr_close);
		for (size_t i = 0; i < nr_close; i++)
			strbuf_addf(&sb, "%s'%s'", i ? ", " : " (close: ", close[i]->name);
		if (nr_close)
			strbuf_addch(&sb, ')');
		cmd_error(
		        "no GPU of the spec table matches '%s'%s; NAME is part of a GPU's name, or a "
		        "vendor, architecture or kind (datacenter, workstation, consumer)",
		        want, sb.buf);
		strbuf_release(&sb);
		strbuf_release(&out);
		return EXIT_USAGE;
	}
	if (fwrite(out.buf, 1, out.len, stdout) != out.len || fflush(stdout) != 0) {
		cmd_error("writing the output: %s", strerror(errno));
		strbuf_release(&out);
		return EXIT_RUNTIME;
	}
	strbuf_release(&out);
	return EXIT_OK;
}
