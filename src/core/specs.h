/*
 * The GPU spec table (data/specs/gpus.tsv, built into the binary): memory
 * size, type and bandwidth, dense FP64 / FP32 / TF32 / FP16 / BF16 / FP8 /
 * INT8 rates, power and PCIe link of each GPU, with a source for each row;
 * matched to real devices by PCI id and name. Used by `gpuscope fit`,
 * `gpuscope specs` and `gpuscope status`.
 */
#ifndef GPUSCOPE_SPECS_H
#define GPUSCOPE_SPECS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gpu_device;

struct gpu_spec {
	const char *name;    /* "H100 SXM5 80GB": the table's own name */
	const char *vendor;  /* "NVIDIA", "AMD", "Intel", "Huawei" */
	const char *arch;    /* "Hopper", "CDNA3", ... */
	const char *kind;    /* "datacenter", "workstation", "consumer" */
	uint32_t pci_id[4];  /* (device << 16) | vendor, 0 = none */
	const char *aliases; /* names drivers report, '|'-separated ("NVIDIA H100 80GB HBM3") */
	/*
	 * Memory as sold, in GiB: vendors' "GB" of GPU memory are binary, an
	 * "80 GB" HBM card has 80 GiB of it and a "24 GB" GeForce 24 GiB.
	 * mem_gb is the old name of the same number, kept while readers move
	 * to mem_gib; it is GiB too, not 1e9 bytes.
	 */
	union {
		double mem_gib;
		double mem_gb;
	};
	/*
	 * The total the driver reports, in bytes (NVML's / nvidia-smi's "FB
	 * Memory Usage: Total"): a real capture where one was seen (mem_measured
	 * true), else mem_gib less the reserve cards of its memory kind show
	 * (gpu_spec_sold_reserve()). NAN only when the size is unknown.
	 */
	double mem_bytes;
	bool mem_measured;     /* mem_bytes is a capture, not the reserve rule */
	double reserved_bytes; /* NVML's "Reserved" from a capture, or NAN (see below) */
	const char *mem_type;  /* "HBM3" */
	double mem_bw_gbs;     /* GB/s */
	/* dense peak rates, TFLOPS (TOPS for int8); NAN = unknown or not supported */
	double fp64, fp64_tensor, fp32, tf32, fp16, bf16, fp8, int8, fp4;
	double tdp_w;
	int pcie_gen, pcie_width; /* 0 unknown */
	const char *source;       /* where the row comes from */
	const char *notes;        /* sparse figures, caveats; "" when none */
};

/*
 * Where the memory of a GPU goes, from the size as sold to what a program
 * can allocate (data/specs/README.md gives the captures and measurements):
 *
 *   mem_gib                      as sold ("80 GB" HBM = 80 GiB)
 *   - gpu_spec_sold_reserve      never shown to software: ECC's 1/16 on
 *                                GDDR6 cards with ECC on, a few MiB to 0.5 %
 *                                elsewhere (H100 80 GiB shows 81559 MiB)
 *   = mem_bytes                  NVML's / nvidia-smi's "Total"
 *   - gpu_spec_reserved_bytes    NVML's "Reserved": the driver's own, never
 *                                given to CUDA (H100 479 MiB, L40S 609 MiB)
 *   = gpu_spec_cuda_total_bytes  what cudaMemGetInfo() / torch.cuda.
 *                                mem_get_info() call total (vLLM's
 *                                total_gpu_memory: 79.22 GiB on an H100)
 *   - gpu_spec_context_bytes     the CUDA context a PyTorch process makes
 *                                before it allocates (about 400 MiB with
 *                                CUDA >= 11.7 lazy loading)
 *   = gpu_spec_usable_bytes      what a PyTorch program can allocate
 *
 * All in bytes, NAN when the size is unknown.
 */
double gpu_spec_sold_reserve(const struct gpu_spec *g);
double gpu_spec_reserved_bytes(const struct gpu_spec *g);
double gpu_spec_cuda_total_bytes(const struct gpu_spec *g);
double gpu_spec_context_bytes(const struct gpu_spec *g);

/*
 * What a PyTorch program can allocate on one g: mem_bytes less the
 * driver's reserve and the CUDA context. This is what a memory estimate
 * (weights, activations, optimizer, KV cache, allocator slack) is judged
 * against: `fit`'s verdicts, max_ctx, max_batch. For serving as vLLM
 * does it, take gpu_memory_utilization of gpu_spec_cuda_total_bytes(g)
 * instead, and the context out of that share (vLLM counts it in its
 * non-torch memory).
 */
double gpu_spec_usable_bytes(const struct gpu_spec *g);

/*
 * The same for a device that reports its own NVML total (a GPU on this
 * machine): total_bytes less the driver's reserve (g's when g has a
 * capture, else the rule by size) and the CUDA context. g may be NULL.
 * NAN when total_bytes is not > 0.
 */
double gpu_usable_from_total(double total_bytes, const struct gpu_spec *g);

/* Every row, in table order. */
size_t gpu_specs(const struct gpu_spec **out);

/* The row of a device in the sample model: by PCI id first, then by name; NULL when none. */
const struct gpu_spec *gpu_spec_match(const struct gpu_device *d);

/*
 * The row that name names (case and punctuation ignored: "h100", "H100 SXM",
 * "rtx 4090", "mi300x"); NULL when none or several match, with up to max
 * close matches in close[] and their number in *nr_close.
 */
const struct gpu_spec *gpu_spec_find(const char *name, const struct gpu_spec **close, size_t max,
                                     size_t *nr_close);

#endif
