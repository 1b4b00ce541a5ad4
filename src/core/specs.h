/*
 * The GPU spec table (data/specs/gpus.tsv, built into the binary): memory
 * size, type and bandwidth, dense FP64 / FP32 / TF32 / FP16 / BF16 / FP8 /
 * INT8 rates, power and PCIe link of each GPU, with a source for each row;
 * matched to real devices by PCI id and name. Used by `gpuscope fit`,
 * `gpuscope specs` and `gpuscope status`.
 */
#ifndef GPUSCOPE_SPECS_H
#define GPUSCOPE_SPECS_H

#include <stddef.h>
#include <stdint.h>

struct gpu_device;

struct gpu_spec {
	const char *name;     /* "H100 SXM5 80GB": the table's own name */
	const char *vendor;   /* "NVIDIA", "AMD", "Intel", "Huawei" */
	const char *arch;     /* "Hopper", "CDNA3", ... */
	const char *kind;     /* "datacenter", "workstation", "consumer" */
	uint32_t pci_id[4];   /* (device << 16) | vendor, 0 = none */
	const char *aliases;  /* names drivers report, '|'-separated ("NVIDIA H100 80GB HBM3") */
	double mem_gb;        /* memory, GB (1e9 bytes) as the vendor sells it */
	double mem_bytes;     /* memory in bytes, as usable (GiB-accurate where known), or NAN */
	const char *mem_type; /* "HBM3" */
	double mem_bw_gbs;    /* GB/s */
	/* dense peak rates, TFLOPS (TOPS for int8); NAN = unknown or not supported */
	double fp64, fp64_tensor, fp32, tf32, fp16, bf16, fp8, int8, fp4;
	double tdp_w;
	int pcie_gen, pcie_width; /* 0 unknown */
	const char *source;       /* where the row comes from */
	const char *notes;        /* sparse figures, caveats; "" when none */
};

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
