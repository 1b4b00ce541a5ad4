/*
 * Tests of the GPU spec table (data/specs/gpus.tsv built in): that it
 * parses into sane rows, and how devices and typed names find their row.
 * Device names, PCI ids and memory totals are those of the real nvidia-smi
 * captures (shared/fixtures/real/nvidia-smi) and of tests/fixtures.
 */
#include "core/specs.h"

#include <math.h>
#include <stdlib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/gpu.h"
#include "harness.h"

#define MIB                 1048576.0
#define ARRAY_SIZE(a)       (sizeof(a) / sizeof((a)[0]))
#define PCI(vendor, device) ((uint32_t)(device) << 16 | (vendor))

static const struct gpu_spec *
row(const char *name)
{
	const struct gpu_spec *t;
	size_t n = gpu_specs(&t);

	for (size_t i = 0; i < n; i++)
		if (!strcmp(t[i].name, name))
			return &t[i];
	return NULL;
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
test_table(void)
{
	const struct gpu_spec *t, *t2, *r;
	double t0 = now();
	size_t n = gpu_specs(&t);
	double took = now() - t0;
	bool unique = true, sourced = true, bw = true, half = true, fp64 = true, nv64 = true;
	bool kinds = true, tf32 = true, ids = true;
	size_t nr_bw = 0, nr_half = 0, nr_fp64 = 0, nr_tf32 = 0;

	is_int(n, 45, "table: 45 rows");
	ok(took < 0.1, "table: parsed in %.3f ms", took * 1e3);
	ok(gpu_specs(&t2) == n && t2 == t, "table: parsed once");
	for (size_t i = 0; i < n; i++) {
		const struct gpu_spec *g = &t[i];

		for (size_t j = i + 1; j < n; j++) {
			if (!strcasecmp(g->name, t[j].name)) {
				unique = false;
				diag("duplicate name %s", g->name);
			}
			for (size_t a = 0; a < 4; a++)
				for (size_t b = 0; b < 4; b++)
					if (g->pci_id[a] && g->pci_id[a] == t[j].pci_id[b]) {
						ids = false;
						diag("%s and %s share a PCI id", g->name,
						     t[j].name);
					}
		}
		if (!*g->source || !*g->vendor || !*g->arch) {
			sourced = false;
			diag("%s: no source, vendor or arch", g->name);
		}
		if (strcmp(g->kind, "datacenter") && strcmp(g->kind, "workstation") &&
		    strcmp(g->kind, "consumer")) {
			kinds = false;
			diag("%s: kind '%s'", g->name, g->kind);
		}
		if (!isnan(g->mem_bw_gbs)) {
			nr_bw++;
			if (g->mem_bw_gbs < 50 || g->mem_bw_gbs > 10000) {
				bw = false;
				diag("%s: %g GB/s", g->name, g->mem_bw_gbs);
			}
		}
		if (!strcmp(g->kind, "datacenter") && !isnan(g->fp16) && !isnan(g->fp32)) {
			nr_half++;
			if (g->fp16 < g->fp32) {
				half = false;
				diag("%s: fp16 %g < fp32 %g", g->name, g->fp16, g->fp32);
			}
		}
		if (!strcmp(g->kind, "consumer") && !isnan(g->fp64) && !isnan(g->fp32)) {
			nr_fp64++;
			if (g->fp64 > g->fp32 / 30) {
				fp64 = false;
				diag("%s: fp64 %g vs fp32 %g", g->name, g->fp64, g->fp32);
			}
			/* GeForce: 1/64 */
			if (!strcmp(g->vendor, "NVIDIA") &&
			    (g->fp32 / g->fp64 < 60 || g->fp32 / g->fp64 > 70)) {
				nv64 = false;
				diag("%s: fp32/fp64 %g", g->name, g->fp32 / g->fp64);
			}
		}
		/* TF32 = 1/2 FP16 dense, wherever both are rated */
		if (!isnan(g->tf32) && !isnan(g->fp16)) {
			nr_tf32++;
			if (fabs(g->tf32 - g->fp16 / 2) > 0.02 * g->fp16) {
				tf32 = false;
				diag("%s: tf32 %g, fp16 %g", g->name, g->tf32, g->fp16);
			}
		}
	}
	ok(unique, "table: no two rows share a name");
	ok(ids, "table: no two rows share a PCI id");
	ok(sourced, "table: every row has a source, vendor and arch");
	ok(kinds, "table: kind is datacenter, workstation or consumer");
	ok(bw && nr_bw >= 40, "table: bandwidth within 50-10000 GB/s (%zu rows)", nr_bw);
	ok(half && nr_half >= 25, "table: datacenter fp16 >= fp32 (%zu rows)", nr_half);
	ok(fp64 && nr_fp64 >= 8, "table: consumer fp64 far below fp32 (%zu rows)", nr_fp64);
	ok(nv64, "table: GeForce fp64 is 1/64 of fp32");
	ok(tf32 && nr_tf32 >= 25, "table: tf32 is half of fp16 (%zu rows)", nr_tf32);

	r = row("H100 SXM5 80GB");
	ok(r != NULL, "H100 SXM5 80GB: a row");
	if (r) {
		is_int(r->pci_id[0], PCI(0x10de, 0x2330), "H100 SXM5: PCI id 10de:2330");
		is_int(r->pci_id[1], 0, "H100 SXM5: one PCI id");
		is_str(r->vendor, "NVIDIA", "H100 SXM5: vendor");
		is_str(r->arch, "Hopper", "H100 SXM5: arch");
		is_str(r->kind, "datacenter", "H100 SXM5: kind");
		is_str(r->aliases, "NVIDIA H100 80GB HBM3", "H100 SXM5: alias");
		is_dbl(r->mem_gib, 80, 0, "H100 SXM5: 80 GiB as sold");
		is_dbl(r->mem_gb, 80, 0, "H100 SXM5: mem_gb is the old name of mem_gib");
		is_dbl(r->mem_bytes, 81559 * MIB, 0, "H100 SXM5: NVML total 81559 MiB");
		is_str(r->mem_type, "HBM3", "H100 SXM5: HBM3");
		is_dbl(r->mem_bw_gbs, 3350, 0, "H100 SXM5: 3350 GB/s");
		is_dbl(r->fp16, 989, 0, "H100 SXM5: FP16 989 dense (datasheet prints 1979 sparse)");
		is_dbl(r->bf16, 989, 0, "H100 SXM5: BF16 989");
		is_dbl(r->tf32, 495, 0, "H100 SXM5: TF32 495");
		is_dbl(r->fp8, 1979, 0, "H100 SXM5: FP8 1979");
		is_dbl(r->fp64_tensor, 67, 0, "H100 SXM5: FP64 tensor 67");
		ok(isnan(r->fp4), "H100 SXM5: no FP4");
		is_dbl(r->tdp_w, 700, 0, "H100 SXM5: 700 W");
		ok(r->pcie_gen == 5 && r->pcie_width == 16, "H100 SXM5: PCIe 5 x16");
		is_str(r->notes ? "" : NULL, "", "H100 SXM5: notes never NULL");
	}
	r = row("RTX 4090");
	if (ok(r != NULL, "RTX 4090: a row")) {
		is_dbl(r->fp16, 165.2, 0, "RTX 4090: FP16 with FP32 accumulate, half rate");
		is_dbl(r->fp32, 82.6, 0, "RTX 4090: FP32 82.6");
		is_str(r->kind, "consumer", "RTX 4090: consumer");
		is_dbl(r->mem_gib, 24, 0, "RTX 4090: 24 GiB as sold");
		is_dbl(r->mem_bytes, 24564 * MIB, 0, "RTX 4090: NVML total 24564 MiB");
		ok(r->mem_measured, "RTX 4090: the total is a capture");
	}
	r = row("A100 PCIe 40GB");
	if (ok(r != NULL, "A100 PCIe 40GB: a row")) {
		is_int(r->pci_id[1], PCI(0x10de, 0x20f1), "A100 PCIe 40GB: second id 20f1");
		ok(isnan(r->fp8), "A100: no FP8 ('-')");
		ok(r->pcie_gen == 4, "A100: PCIe 4");
	}
	r = row("T4");
	if (ok(r != NULL, "T4: a row"))
		ok(isnan(r->bf16) && isnan(r->tf32) && r->fp16 == 65,
		   "T4: FP16 65, no BF16, no TF32");
	r = row("H20-3e 141GB");
	if (ok(r != NULL, "H20-3e: a row"))
		ok(isnan(r->mem_bw_gbs) && isnan(r->fp16) && isnan(r->tdp_w) && r->pcie_gen == 0,
		   "H20-3e: unknowns stay unknown");
	r = row("MI300X");
	if (ok(r != NULL, "MI300X: a row")) {
		is_str(r->vendor, "AMD", "MI300X: AMD");
		is_dbl(r->fp16, 1307.4, 0, "MI300X: FP16 1307.4 dense");
		is_int(r->pci_id[0], PCI(0x1002, 0x74a1), "MI300X: 1002:74a1");
	}
	ok(row("Arc A770 16GB") && row("Data Center GPU Max 1550") && row("Ascend 910B"),
	   "Intel and Huawei rows");
	r = row("L40S");
	if (r)
		is_dbl(r->mem_bytes, 46068 * MIB, 0, "L40S: NVML total 46068 MiB (ECC on)");
	r = row("H200 SXM 141GB");
	if (r)
		is_dbl(r->mem_bytes, 143771 * MIB, 0, "H200 SXM: NVML total 143771 MiB");
}

/*
 * The NVML totals of real cards (nvidia-smi "FB Memory Usage: Total"),
 * written here apart from the table, with where each was seen
 * (data/specs/README.md cites them in full).
 */
static const struct {
	const char *row;
	double mib;
} captured[] = {
	{ "H200 SXM 141GB", 143771 }, /* shared/fixtures/real, driver 590.48.01 */
	{ "H100 SXM5 80GB", 81559 },  /* shared/fixtures/real; NVIDIA/nccl#1264 */
	{ "L40S", 46068 },            /* shared/fixtures/real, ECC on */
	{ "A100 SXM4 40GB", 40960 },  /* modal-labs/modal-client#2797 */
	{ "A100 SXM4 80GB", 81920 },  /* modal-labs/modal-client#2797 */
	{ "A800 SXM4 80GB", 81920 },  /* dexmal/dexbotic#41 */
	{ "A800 PCIe 80GB", 81920 },  /* vllm-project/vllm#41519 */
	{ "A10", 23028 },             /* modal-labs/modal-client#2797; mayooot/detect-gpu#3 */
	{ "L4", 23034 },              /* modal-labs/modal-client#2797 */
	{ "T4", 15360 },              /* modal-labs/modal-client#2797 */
	{ "RTX 4090", 24564 },        /* RLinf/RLinf#255 */
	{ "RTX 3090", 24576 },        /* noonghunna/club-3090#1128 */
	{ "RTX 5090", 32607 },        /* noonghunna/club-3090#1261 */
	{ "B200", 183359 },           /* NVIDIA/TensorRT-LLM#10278 */
};

static void
test_memory(void)
{
	const struct gpu_spec *rows, *r;
	size_t n = gpu_specs(&rows), nr_measured = 0, nr_rule = 0;
	bool filled = true, below = true, chain = true;

	for (size_t i = 0; i < ARRAY_SIZE(captured); i++) {
		r = row(captured[i].row);
		if (!ok(r != NULL, "capture of %s: a row", captured[i].row))
			continue;
		is_dbl(r->mem_bytes, captured[i].mib * MIB, 0, "%s: NVML total %.0f MiB",
		       captured[i].row, captured[i].mib);
		ok(r->mem_measured, "%s: marked as a capture", captured[i].row);
	}
	for (size_t i = 0; i < n; i++) {
		const struct gpu_spec *g = &rows[i];
		double sold = g->mem_gib * 1073741824.0, u = gpu_spec_usable_bytes(g);
		bool listed = false;

		for (size_t k = 0; k < ARRAY_SIZE(captured); k++)
			listed |= !strcmp(captured[k].row, g->name);
		if (g->mem_measured) {
			nr_measured++;
			if (!listed) {
				ok(0, "%s: a capture in the table is also in this test", g->name);
			}
		} else {
			nr_rule++;
		}
		if (!(g->mem_gib > 0) || !isfinite(g->mem_bytes)) {
			filled = false;
			diag("%s: no memory size", g->name);
			continue;
		}
		/* what the card shows is at most what is sold, and at least 15/16 less a little */
		if (g->mem_bytes > sold || g->mem_bytes < sold * 15 / 16 - 16 * MIB) {
			below = false;
			diag("%s: %.0f MiB of %.0f GiB", g->name, g->mem_bytes / MIB, g->mem_gib);
		}
		if (!(u > 0 && u < gpu_spec_cuda_total_bytes(g) &&
		      gpu_spec_cuda_total_bytes(g) <= g->mem_bytes)) {
			chain = false;
			diag("%s: usable %.0f, cuda %.0f, total %.0f", g->name, u,
			     gpu_spec_cuda_total_bytes(g), g->mem_bytes);
		}
	}
	ok(filled, "every row: size as sold and NVML total known");
	ok(below, "every row: 15/16 of the size as sold <= NVML total <= the size as sold");
	ok(chain, "every row: usable < CUDA total <= NVML total");
	ok(nr_measured == ARRAY_SIZE(captured), "table: %zu captured totals, %zu by rule",
	   nr_measured, nr_rule);

	/* the reserve rule, on rows without a capture, against cards of the same kind that have one
	 */
	r = row("H100 PCIe 80GB");
	if (r) {
		ok(!r->mem_measured, "H100 PCIe: no capture, the HBM rule");
		is_dbl(r->mem_bytes, 81559 * MIB, 0.5 * MIB,
		       "H100 PCIe: 81559 MiB as the H100 SXM5");
	}
	r = row("H200 NVL");
	if (r)
		is_dbl(r->mem_bytes, 143771 * MIB, 32 * MIB,
		       "H200 NVL: within 32 MiB of the H200 SXM");
	r = row("RTX 4080");
	if (r)
		is_dbl(r->mem_bytes, 16376 * MIB, 0,
		       "RTX 4080: GDDR6X 1/2048, 16376 MiB as the 4080 SUPER");
	r = row("L40");
	if (r)
		is_dbl(r->mem_bytes, 46068 * MIB, 0, "L40: GDDR6 with ECC, 46068 MiB as the L40S");
	r = row("A40");
	if (r)
		is_dbl(r->mem_bytes, 46068 * MIB, 0, "A40: GDDR6 with ECC, 46068 MiB");
	r = row("RTX A6000");
	if (r)
		is_dbl(r->mem_bytes, 49152 * MIB, 0, "RTX A6000: GDDR6 without ECC, all 48 GiB");
	r = row("MI300X");
	if (r)
		is_dbl(r->mem_bytes, (192 * 1024 - 16) * MIB, 0, "MI300X: amdgpu keeps 16 MiB");
	r = row("A100 PCIe 40GB");
	if (r)
		is_dbl(r->mem_bytes, 40960 * MIB, 0, "A100 PCIe 40GB: Ampere HBM2, nothing kept");
	is_dbl(gpu_spec_sold_reserve(row("RTX 4090")), 12 * MIB, 0, "RTX 4090: 12 MiB never shown");

	/* what a program can allocate */
	r = row("H100 SXM5 80GB");
	if (r) {
		is_dbl(gpu_spec_reserved_bytes(r), 479 * MIB, 0, "H100: NVML reserves 479 MiB");
		is_dbl(gpu_spec_cuda_total_bytes(r), 81080 * MIB, 0, "H100: CUDA total 81080 MiB");
		/* vLLM reads torch.cuda.mem_get_info()'s total as 79.22 GiB (vllm#10511) */
		is_dbl(gpu_spec_cuda_total_bytes(r) / 1073741824.0, 79.22, 0.1,
		       "H100: CUDA total as vLLM reports it, 79.22 GiB");
		is_dbl(gpu_spec_context_bytes(r), 400 * MIB, 0, "context: 400 MiB");
		is_dbl(gpu_spec_usable_bytes(r), 80680 * MIB, 0, "H100: 80680 MiB to allocate");
	}
	r = row("RTX 4090");
	if (r) {
		/* torch reports 23.52 GiB total on a 4090 (pytorch#182941), 23.58 in vllm#14447 */
		is_dbl(gpu_spec_cuda_total_bytes(r) / 1073741824.0, 23.55, 0.05,
		       "RTX 4090: CUDA total 23.5-23.6 GiB as torch reports it");
		ok(gpu_spec_usable_bytes(r) / 1073741824.0 > 23.0,
		   "RTX 4090: more than 23 GiB to allocate");
	}
	ok(isnan(gpu_spec_usable_bytes(NULL)) && isnan(gpu_spec_reserved_bytes(NULL)) &&
	           isnan(gpu_spec_sold_reserve(NULL)) && isnan(gpu_spec_cuda_total_bytes(NULL)),
	   "no row: NAN");
	is_dbl(gpu_spec_context_bytes(NULL), 400 * MIB, 0, "context of no row: 400 MiB");

	/* a device's own total */
	r = row("H100 SXM5 80GB");
	is_dbl(gpu_usable_from_total(81559 * MIB, r), 80680 * MIB, 0,
	       "device total of a captured card: its reserve");
	/* a MIG slice (40448 MiB) is no capture's size: the rule, 396 + 1.56 per GiB */
	is_dbl(gpu_usable_from_total(40448 * MIB, r), (40448 - 458 - 400) * MIB, 0,
	       "device total of another size: the reserve rule");
	is_dbl(gpu_usable_from_total(8192 * MIB, NULL), (8192 - 408 - 400) * MIB, 0,
	       "no row, 8 GiB: 408 MiB reserved as the RTX 2080 SUPER");
	ok(isnan(gpu_usable_from_total(0, r)) && isnan(gpu_usable_from_total(-1, r)) &&
	           isnan(gpu_usable_from_total(NAN, r)) &&
	           isnan(gpu_usable_from_total(INFINITY, r)),
	   "device total 0, negative, NAN, inf: NAN");
	is_dbl(gpu_usable_from_total(100 * MIB, NULL), 0, 0, "a tiny total: 0, not negative");
}

/*
 * Where the real captures are beside the project, every card of them that
 * has a row shows the total (and reserve) of its row.
 */
static void
test_real_captures(void)
{
	const char *dir = getenv("GPUSCOPE_REAL_FIXTURES");
	const char *files[] = {
		"linux-x86_64__nvidia-h100-80gb-hbm3__590.48.01.txt",
		"linux-x86_64__nvidia-h200__590.48.01.txt",
		"linux-x86_64__nvidia-l40s__595.80.txt",
	};
	char path[512];

	if (!dir)
		dir = "../shared/fixtures/real";
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		char line[512], product[128] = "";
		double total = NAN, reserved = NAN;
		bool in_fb = false;
		const struct gpu_spec *r;
		FILE *f;

		snprintf(path, sizeof(path), "%s/nvidia-smi/%s", dir, files[i]);
		f = fopen(path, "r");
		if (!f) {
			skip("no real captures beside the project (../shared/fixtures/real)");
			return;
		}
		while (fgets(line, sizeof(line), f) && (isnan(total) || isnan(reserved))) {
			char *v = strchr(line, ':');

			if (strstr(line, "FB Memory Usage"))
				in_fb = true;
			if (!v)
				continue;
			if (!*product && strstr(line, "Product Name"))
				sscanf(v + 1, " %127[^\n]", product);
			if (in_fb && strstr(line, "Total"))
				total = strtod(v + 1, NULL);
			else if (in_fb && strstr(line, "Reserved"))
				reserved = strtod(v + 1, NULL);
		}
		fclose(f);
		r = gpu_spec_find(product, NULL, 0, &(size_t){ 0 });
		if (!ok(r != NULL, "capture %s: '%s' has a row", files[i], product))
			continue;
		is_dbl(r->mem_bytes, total * MIB, 0, "capture %s: %s total %.0f MiB", files[i],
		       r->name, total);
		is_dbl(gpu_spec_reserved_bytes(r), reserved * MIB, 0,
		       "capture %s: reserved %.0f MiB", files[i], reserved);
	}
}

static struct gpu_device dev;

static const struct gpu_device *
mkdev(const char *name, uint32_t pci, double mib)
{
	memset(&dev, 0, sizeof(dev));
	snprintf(dev.name, sizeof(dev.name), "%s", name);
	dev.pci_device_id = pci;
	if (mib > 0)
		dev_set(&dev, GF_MEM_TOTAL, mib * MIB);
	return &dev;
}

static const char *
match(const char *name, uint32_t pci, double mib)
{
	const struct gpu_spec *r = gpu_spec_match(mkdev(name, pci, mib));

	return r ? r->name : NULL;
}

static void
test_match(void)
{
	/* the real captures: PCI id and name */
	is_str(match("NVIDIA H100 80GB HBM3", PCI(0x10de, 0x2330), 81559), "H100 SXM5 80GB",
	       "capture H100 80GB HBM3 (10de:2330)");
	is_str(match("NVIDIA H200", PCI(0x10de, 0x2335), 143771), "H200 SXM 141GB",
	       "capture H200 (10de:2335)");
	is_str(match("NVIDIA L40S", PCI(0x10de, 0x26b9), 46068), "L40S",
	       "capture L40S (10de:26b9)");
	is_str(match("NVIDIA GeForce RTX 4080 SUPER", PCI(0x10de, 0x2702), 16376), NULL,
	       "capture RTX 4080 SUPER: no row (not the RTX 4080's)");
	is_str(match("NVIDIA GeForce RTX 2080 SUPER", PCI(0x10de, 0x1e81), 8192), NULL,
	       "capture RTX 2080 SUPER: no row");
	/* the same by name alone */
	is_str(match("NVIDIA H100 80GB HBM3", 0, 81559), "H100 SXM5 80GB", "H100 by name (alias)");
	is_str(match("NVIDIA H200", 0, 143771), "H200 SXM 141GB", "H200 by name (alias)");
	is_str(match("NVIDIA L40S", 0, 46068), "L40S", "L40S by name");
	is_str(match("NVIDIA L40S", 0, 0), "L40S", "L40S by name, memory unknown");
	is_str(match("NVIDIA GeForce RTX 4080 SUPER", 0, 16376), NULL,
	       "RTX 4080 SUPER by name: none");
	is_str(match("NVIDIA GeForce RTX 2080 SUPER", 0, 8192), NULL,
	       "RTX 2080 SUPER by name: none");
	/* a PCI id of one SKU wins over the name */
	is_str(match("", PCI(0x10de, 0x2330), 0), "H100 SXM5 80GB", "PCI id alone");
	is_str(match("Graphics Device", PCI(0x10de, 0x2331), 0), "H100 PCIe 80GB",
	       "PCI id with a useless name");
	ok(!gpu_spec_match(NULL), "NULL device");
	is_str(match("", 0, 81559), NULL, "no name, no id: none");

	/* names seen in tools (bench-specs.md 3.5) and usual driver spellings */
	is_str(match("NVIDIA A100-SXM4-40GB", 0, 40960), "A100 SXM4 40GB", "A100-SXM4-40GB");
	is_str(match("A100-SXM4-40GB", 0, 0), "A100 SXM4 40GB", "A100-SXM4-40GB (old driver)");
	is_str(match("NVIDIA A100 80GB PCIe", 0, 81920), "A100 PCIe 80GB", "A100 80GB PCIe");
	is_str(match("NVIDIA A100-SXM4-80GB", 0, 81920), "A100 SXM4 80GB", "A100-SXM4-80GB");
	is_str(match("NVIDIA A100-PCIE-40GB", 0, 40960), "A100 PCIe 40GB", "A100-PCIE-40GB");
	is_str(match("NVIDIA H100 PCIe", 0, 81559), "H100 PCIe 80GB", "H100 PCIe");
	is_str(match("NVIDIA H100 NVL", 0, 95830), "H100 NVL 94GB", "H100 NVL");
	is_str(match("NVIDIA H20", 0, 0), "H20 96GB", "H20");
	is_str(match("NVIDIA H20-3e", 0, 0), "H20-3e 141GB", "H20-3e");
	is_str(match("NVIDIA GeForce RTX 4090", 0, 24564), "RTX 4090", "GeForce RTX 4090");
	is_str(match("NVIDIA GeForce RTX 4090 D", 0, 24564), NULL, "RTX 4090 D: none");
	is_str(match("NVIDIA RTX A6000", 0, 49140), "RTX A6000", "RTX A6000");
	is_str(match("NVIDIA RTX 6000 Ada Generation", 0, 49140), "RTX 6000 Ada",
	       "RTX 6000 Ada Generation");
	is_str(match("NVIDIA B200 180GB", 0, 0), "B200", "B200 180GB");
	is_str(match("NVIDIA GB200 185GB", 0, 0), "GB200", "GB200 185GB");
	is_str(match("Tesla V100-SXM2-32GB", 0, 32768), "V100 SXM2 32GB", "Tesla V100-SXM2-32GB");
	is_str(match("Tesla T4", 0, 15360), "T4", "Tesla T4");
	is_str(match("NVIDIA GeForce RTX 3080", 0, 10240), "RTX 3080 10GB", "RTX 3080, 10 GB");
	is_str(match("NVIDIA GeForce RTX 3080", 0, 12288), NULL, "RTX 3080, 12 GB: another SKU");
	is_str(match("NVIDIA GeForce RTX 3080", PCI(0x10de, 0x220a), 12288), NULL,
	       "RTX 3080 12GB id: none");
	is_str(match("AMD Instinct MI300X", 0, 196592), "MI300X", "AMD Instinct MI300X");
	is_str(match("Intel(R) Data Center GPU Max 1550", 0, 0), "Data Center GPU Max 1550",
	       "Intel(R) Data Center GPU Max 1550");

	/* AMD and Intel names of tests/fixtures */
	is_str(match("AMD Radeon RX 7800 XT", PCI(0x1002, 0x747e), 16384), NULL,
	       "RX 7800 XT: no row");
	is_str(match("Intel UHD Graphics", PCI(0x8086, 0x9a49), 0), NULL,
	       "Intel UHD Graphics: none");
	is_str(match("Intel Arc A380", PCI(0x8086, 0x56a5), 6144), NULL, "Arc A380: none");

	/* one id, several SKUs (1002:744c): the name and memory decide */
	is_str(match("AMD Radeon RX 7900 XTX", PCI(0x1002, 0x744c), 24560), "RX 7900 XTX",
	       "744c named XTX, 24 GB");
	is_str(match("AMD Radeon RX 7900 XTX", PCI(0x1002, 0x744c), 0), "RX 7900 XTX",
	       "744c named XTX, memory unknown");
	is_str(match("AMD Radeon RX 7900 XT", PCI(0x1002, 0x744c), 20464), NULL,
	       "744c named XT: none");
	is_str(match("AMD Radeon RX 7900 GRE", PCI(0x1002, 0x744c), 16368), NULL,
	       "744c named GRE: none");
	is_str(match("Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M", PCI(0x1002, 0x744c), 24560),
	       "RX 7900 XTX", "744c by pci.ids name, 24 GB");
	is_str(match("Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M", PCI(0x1002, 0x744c), 20464), NULL,
	       "744c by pci.ids name, 20 GB: none");
	is_str(match("", PCI(0x1002, 0x744c), 0), NULL, "744c, nothing else known: none");
	/* Arc A770 (8086:56a0): 8 and 16 GB boards */
	is_str(match("Intel(R) Arc(TM) A770 Graphics", PCI(0x8086, 0x56a0), 16288), "Arc A770 16GB",
	       "A770, 16 GB");
	is_str(match("Intel(R) Arc(TM) A770 Graphics", PCI(0x8086, 0x56a0), 8128), NULL,
	       "A770, 8 GB: none");
	/* MI250X: 740c is also MI250's; a GCD shows half the board's memory */
	is_str(match("AMD Instinct MI250X", PCI(0x1002, 0x740c), 65520), "MI250X",
	       "740c named MI250X (one GCD)");
	is_str(match("AMD Instinct MI250", PCI(0x1002, 0x740c), 65520), NULL,
	       "740c named MI250: none");
	is_str(match("", PCI(0x1002, 0x7408), 65520), "MI250X", "7408: MI250X only");
	/* RTX 3060 ids are shared with 8 GB boards */
	is_str(match("NVIDIA GeForce RTX 3060", PCI(0x10de, 0x2504), 12288), "RTX 3060 12GB",
	       "3060 LHR, 12 GB");
	is_str(match("NVIDIA GeForce RTX 3060", PCI(0x10de, 0x2504), 8192), NULL,
	       "3060, 8 GB: none");
}

static const char *
find(const char *name, size_t *nr)
{
	const struct gpu_spec *close[8];
	const struct gpu_spec *r = gpu_spec_find(name, close, 8, nr);

	return r ? r->name : NULL;
}

static bool
close_has(const struct gpu_spec *const *close, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(close[i]->name, name))
			return true;
	return false;
}

static void
test_find(void)
{
	const struct gpu_spec *close[8];
	size_t nr = 99;

	is_str(find("h100 sxm", &nr), "H100 SXM5 80GB", "find 'h100 sxm'");
	is_int(nr, 0, "find 'h100 sxm': no close list");
	is_str(find("H100-SXM", &nr), "H100 SXM5 80GB", "find 'H100-SXM'");
	is_str(find("h100_sxm5", &nr), "H100 SXM5 80GB", "find 'h100_sxm5'");
	is_str(find("H100 PCIe", &nr), "H100 PCIe 80GB", "find 'H100 PCIe'");
	is_str(find("h100 nvl", &nr), "H100 NVL 94GB", "find 'h100 nvl'");
	is_str(find("NVIDIA H100 80GB HBM3", &nr), "H100 SXM5 80GB", "find the driver's name");
	is_str(find("rtx 4090", &nr), "RTX 4090", "find 'rtx 4090'");
	is_str(find("RTX4090", &nr), "RTX 4090", "find 'RTX4090'");
	is_str(find("4090", &nr), "RTX 4090", "find '4090'");
	is_str(find("GeForce RTX 4090", &nr), "RTX 4090", "find 'GeForce RTX 4090'");
	is_str(find("mi300x", &nr), "MI300X", "find 'mi300x'");
	is_str(find("AMD Instinct MI300X", &nr), "MI300X", "find 'AMD Instinct MI300X'");
	is_str(find("h200", &nr), "H200 SXM 141GB", "find 'h200': the 'NVIDIA H200' alias");
	is_str(find("l4", &nr), "L4", "find 'l4'");
	is_str(find("L40", &nr), "L40", "find 'L40'");
	is_str(find("l40s", &nr), "L40S", "find 'l40s'");
	is_str(find("a10", &nr), "A10", "find 'a10' (not A100)");
	is_str(find("v100s", &nr), "V100S PCIe 32GB", "find 'v100s'");
	is_str(find("7900 xtx", &nr), "RX 7900 XTX", "find '7900 xtx'");
	is_str(find("max 1550", &nr), "Data Center GPU Max 1550", "find 'max 1550'");
	is_str(find("a770", &nr), "Arc A770 16GB", "find 'a770'");
	is_str(find("a100 sxm4 40gb", &nr), "A100 SXM4 40GB", "find 'a100 sxm4 40gb'");
	is_str(find("a10 24gb", &nr), "A10", "find 'a10 24gb'");

	/* ambiguous */
	ok(!gpu_spec_find("h100", close, 8, &nr), "find 'h100': ambiguous");
	ok(nr == 3 && close_has(close, nr, "H100 SXM5 80GB") &&
	           close_has(close, nr, "H100 PCIe 80GB") && close_has(close, nr, "H100 NVL 94GB"),
	   "find 'h100': the SXM5, PCIe and NVL rows (%zu)", nr);
	ok(!gpu_spec_find("a100 80gb", close, 8, &nr), "find 'a100 80gb': ambiguous");
	ok(nr == 2 && close_has(close, nr, "A100 SXM4 80GB") &&
	           close_has(close, nr, "A100 PCIe 80GB"),
	   "find 'a100 80gb': SXM4 and PCIe 80GB (%zu)", nr);
	ok(!gpu_spec_find("v100", close, 8, &nr) && nr == 4, "find 'v100': four V100 rows (%zu)",
	   nr);
	ok(!gpu_spec_find("h100", close, 1, &nr) && nr == 1, "find 'h100', max 1: one close");
	ok(!gpu_spec_find("h100", NULL, 0, &nr) && nr == 0, "find 'h100', max 0: none listed");

	/* unknown: close matches by edit distance */
	ok(!gpu_spec_find("rtx 4099", close, 8, &nr), "find 'rtx 4099': none");
	ok(nr >= 1 && !strcmp(close[0]->name, "RTX 4090"), "find 'rtx 4099': RTX 4090 first (%zu)",
	   nr);
	ok(!gpu_spec_find("rtx 4080 super", close, 8, &nr), "find 'rtx 4080 super': none");
	ok(nr >= 1 && !strcmp(close[0]->name, "RTX 4080"), "find 'rtx 4080 super': RTX 4080 close");
	ok(!gpu_spec_find("h1000", close, 8, &nr), "find 'h1000': none");
	ok(nr >= 3 && close_has(close, nr, "H100 SXM5 80GB"), "find 'h1000': the H100s close (%zu)",
	   nr);
	is_str(find("mi300", &nr), "MI300X", "find 'mi300': the one row it starts");
	ok(!gpu_spec_find("mi310x", close, 8, &nr), "find 'mi310x': none");
	ok(nr >= 1 && !strcmp(close[0]->name, "MI300X"), "find 'mi310x': MI300X first (%zu)", nr);
	ok(!gpu_spec_find("zzzzzzzz", close, 8, &nr) && nr == 0, "find 'zzzzzzzz': nothing close");
	ok(!gpu_spec_find("", close, 8, &nr) && nr == 0, "find '': none");
	ok(!gpu_spec_find("NVIDIA", close, 8, &nr) && nr == 0, "find 'NVIDIA': none");
	ok(!gpu_spec_find(NULL, close, 8, &nr) && nr == 0, "find NULL: none");
}

int
main(void)
{
	test_table();
	test_memory();
	test_real_captures();
	test_match();
	test_find();
	return done_testing();
}
