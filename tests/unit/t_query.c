/*
 * Tests of the nvidia-smi query front end on hand-built snapshots: field
 * and --format parsing, every field's spelling (known, unknown, edge
 * values), header options, compute apps and GPUs in a bad state. The
 * expected lines of the two "capture" tests are nvidia-smi's own output,
 * copied from the real captures in shared/fixtures/real/nvidia-smi.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

#include "core/err.h"
#include "core/fields.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "front/query.h"

#define MIB 1048576.0

static void
set_tz(const char *tz)
{
	setenv("TZ", tz, 1);
	tzset();
}

/* Run a --query-gpu or --query-compute-apps on snap; returns a static buffer (or the error). */
static const char *
run(enum query_kind kind, const char *fields, const char *format, const struct gpu_snapshot *snap)
{
	static struct strbuf out = STRBUF_INIT;
	struct query q;
	struct err err = ERR_INIT;

	strbuf_reset(&out);
	query_init(&q, kind);
	if (query_add_fields(&q, fields, &err) ||
	    (format && query_parse_format(&q.fmt, format, &err))) {
		strbuf_addf(&out, "error: %s", err.msg);
	} else {
		query_print(&q, snap, &out);
	}
	query_release(&q);
	return out.buf;
}

/* The error message of adding fields to a query of kind, or "" when it succeeds. */
static const char *
field_error(enum query_kind kind, const char *fields)
{
	static struct err err;
	struct query q;
	int rc;

	err_clear(&err);
	query_init(&q, kind);
	rc = query_add_fields(&q, fields, &err);
	if (rc && rc != E_USAGE)
		snprintf(err.msg, sizeof(err.msg), "(wrong code %d)", rc);
	query_release(&q);
	return rc ? err.msg : "";
}

/* Value of one GPU field for device 0 of snap, with units. */
static const char *
value(const struct gpu_snapshot *snap, const char *field)
{
	static struct strbuf out = STRBUF_INIT;
	int id = query_field_lookup(QUERY_GPU, field);

	strbuf_reset(&out);
	if (id < 0)
		return "(no such field)";
	query_value(QUERY_GPU, (unsigned)id, snap, 0, false, &out);
	return out.buf;
}

static const char *
value_nounits(const struct gpu_snapshot *snap, const char *field)
{
	static struct strbuf out = STRBUF_INIT;
	int id = query_field_lookup(QUERY_GPU, field);

	strbuf_reset(&out);
	if (id < 0)
		return "(no such field)";
	query_value(QUERY_GPU, (unsigned)id, snap, 0, true, &out);
	return out.buf;
}

static void
copy(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src);
}

/* The H100 of linux-x86_64__nvidia-h100-80gb-hbm3__590.48.01, under load. */
static void
make_h100(struct gpu_snapshot *s)
{
	struct gpu_device *d;

	gpu_snapshot_init(s);
	s->time = 1784016773.353; /* 2026/07/14 08:12:53.353 UTC */
	copy(s->nvidia.driver_version, sizeof(s->nvidia.driver_version), "590.48.01");
	d = gpu_snapshot_add_dev(s);
	d->vendor = VENDOR_NVIDIA;
	copy(d->name, sizeof(d->name), "NVIDIA H100 80GB HBM3");
	copy(d->serial, sizeof(d->serial), "0000000000000");
	copy(d->uuid, sizeof(d->uuid), "GPU-00000000-0000-0000-0000-000000000000");
	copy(d->pci_bus_id, sizeof(d->pci_bus_id), "00000000:00:09.0");
	copy(d->vbios, sizeof(d->vbios), "96.00.A5.00.01");
	copy(d->inforom, sizeof(d->inforom), "G520.0200.00.05");
	copy(d->compute_cap, sizeof(d->compute_cap), "9.0");
	d->pci_valid = true;
	d->pci_dev = 9;
	d->pci_device_id = 0x233010DE;
	d->pci_subsys_id = 0x16C110DE;
	dev_set(d, GF_PCIE_GEN, 5);
	dev_set(d, GF_PCIE_GEN_MAX, 5);
	dev_set(d, GF_PCIE_GEN_DEV_MAX, 5);
	dev_set(d, GF_PCIE_WIDTH, 16);
	dev_set(d, GF_PCIE_WIDTH_MAX, 16);
	dev_set(d, GF_DISPLAY_ACTIVE, 0);
	dev_set(d, GF_PERSISTENCE, 1);
	dev_set(d, GF_PSTATE, 0);
	dev_set(d, GF_CLOCK_REASONS_SUPPORTED, 0x1FF);
	dev_set(d, GF_CLOCK_REASONS, 0);
	/* byte counts that are not whole MiB: nvidia-smi rounds down */
	dev_set(d, GF_MEM_TOTAL, 81559 * MIB + 1048575);
	dev_set(d, GF_MEM_RESERVED, 479 * MIB + 4096);
	dev_set(d, GF_MEM_USED, 19818 * MIB + 12345);
	dev_set(d, GF_MEM_FREE, 61263 * MIB);
	dev_set(d, GF_COMPUTE_MODE, CM_DEFAULT);
	dev_set(d, GF_UTIL_GPU, 100);
	dev_set(d, GF_UTIL_MEM, 11);
	dev_set(d, GF_UTIL_ENC, 0);
	dev_set(d, GF_UTIL_DEC, 0);
	dev_set(d, GF_UTIL_JPEG, 0);
	dev_set(d, GF_UTIL_OFA, 0);
	dev_set(d, GF_ENC_SESSIONS, 0);
	dev_set(d, GF_ENC_FPS, 0);
	dev_set(d, GF_ENC_LATENCY, 0);
	dev_set(d, GF_ECC_MODE, 1);
	dev_set(d, GF_ECC_MODE_PENDING, 1);
	dev_set(d, GF_ECC_CORR_VOLATILE, 0);
	dev_set(d, GF_ECC_CORR_AGGREGATE, 0);
	dev_set(d, GF_ECC_UNCORR_VOLATILE, 0);
	dev_set(d, GF_ECC_UNCORR_AGGREGATE, 0);
	dev_set(d, GF_REMAP_CORR, 0);
	dev_set(d, GF_REMAP_UNCORR, 0);
	dev_set(d, GF_REMAP_PENDING, 0);
	dev_set(d, GF_REMAP_FAILURE, 0);
	dev_set(d, GF_TEMP_GPU, 59);
	dev_set(d, GF_TEMP_MARGIN, 26);
	dev_set(d, GF_TEMP_MEM, 54);
	/* milliwatts times 1e-3, as the NVML backend computes them */
	dev_set(d, GF_POWER_DRAW, 631950 * 1e-3);
	dev_set(d, GF_POWER_AVERAGE, 631950 * 1e-3);
	dev_set(d, GF_POWER_INSTANT, 625680 * 1e-3);
	dev_set(d, GF_POWER_LIMIT_SET, 700000 * 1e-3);
	dev_set(d, GF_POWER_LIMIT, 700000 * 1e-3);
	dev_set(d, GF_POWER_LIMIT_DEFAULT, 700000 * 1e-3);
	dev_set(d, GF_POWER_LIMIT_MIN, 200000 * 1e-3);
	dev_set(d, GF_POWER_LIMIT_MAX, 700000 * 1e-3);
	dev_set(d, GF_CLOCK_GRAPHICS, 1980);
	dev_set(d, GF_CLOCK_SM, 1980);
	dev_set(d, GF_CLOCK_MEM, 2619);
	dev_set(d, GF_CLOCK_VIDEO, 1545);
	dev_set(d, GF_CLOCK_MAX_GRAPHICS, 1980);
	dev_set(d, GF_CLOCK_MAX_SM, 1980);
	dev_set(d, GF_CLOCK_MAX_MEM, 2619);
	dev_set(d, GF_MIG_MODE, 0);
	dev_set(d, GF_MIG_MODE_PENDING, 0);
}

/* Every supported field that the captures print, in their order (display_mode left out). */
static const char capture_fields[] =
        "timestamp,driver_version,count,name,serial,uuid,pci.bus_id,pci.domain,pci.bus,pci.device,"
        "pci.device_id,pci.sub_device_id,pcie.link.gen.current,pcie.link.gen.gpucurrent,"
        "pcie.link.gen.max,pcie.link.gen.gpumax,pcie.link.width.current,pcie.link.width.max,index,"
        "display_active,persistence_mode,vbios_version,inforom.img,fan.speed,pstate,"
        "clocks_event_reasons.supported,clocks_event_reasons.active,clocks_event_reasons.gpu_idle,"
        "clocks_event_reasons.applications_clocks_setting,clocks_event_reasons.sw_power_cap,"
        "clocks_event_reasons.hw_slowdown,clocks_event_reasons.hw_thermal_slowdown,"
        "clocks_event_reasons.hw_power_brake_slowdown,clocks_event_reasons.sw_thermal_slowdown,"
        "clocks_event_reasons.sync_boost,memory.total,memory.reserved,memory.used,memory.free,"
        "compute_mode,compute_cap,utilization.gpu,utilization.memory,utilization.encoder,"
        "utilization.decoder,utilization.jpeg,utilization.ofa,encoder.stats.sessionCount,"
        "encoder.stats.averageFps,encoder.stats.averageLatency,ecc.mode.current,ecc.mode.pending,"
        "ecc.errors.corrected.volatile.total,ecc.errors.corrected.aggregate.total,"
        "ecc.errors.uncorrected.volatile.total,ecc.errors.uncorrected.aggregate.total,"
        "retired_pages.single_bit_ecc.count,retired_pages.double_bit.count,retired_pages.pending,"
        "remapped_rows.correctable,remapped_rows.uncorrectable,remapped_rows.pending,"
        "remapped_rows.failure,temperature.gpu,temperature.gpu.tlimit,temperature.memory,"
        "power.draw,power.draw.average,power.draw.instant,power.limit,enforced.power.limit,"
        "power.default_limit,power.min_limit,power.max_limit,clocks.current.graphics,"
        "clocks.current.sm,clocks.current.memory,clocks.current.video,clocks.max.graphics,"
        "clocks.max.sm,clocks.max.memory,mig.mode.current,mig.mode.pending,hostname";

/* nvidia-smi's header for capture_fields (from the capture) */
static const char capture_header[] =
        "timestamp, driver_version, count, name, serial, uuid, pci.bus_id, pci.domain, pci.bus, "
        "pci.device, pci.device_id, pci.sub_device_id, pcie.link.gen.current, "
        "pcie.link.gen.gpucurrent, pcie.link.gen.max, pcie.link.gen.gpumax, "
        "pcie.link.width.current, pcie.link.width.max, index, display_active, persistence_mode, "
        "vbios_version, inforom.img, fan.speed [%], pstate, clocks_event_reasons.supported, "
        "clocks_event_reasons.active, clocks_event_reasons.gpu_idle, "
        "clocks_event_reasons.applications_clocks_setting, clocks_event_reasons.sw_power_cap, "
        "clocks_event_reasons.hw_slowdown, clocks_event_reasons.hw_thermal_slowdown, "
        "clocks_event_reasons.hw_power_brake_slowdown, clocks_event_reasons.sw_thermal_slowdown, "
        "clocks_event_reasons.sync_boost, memory.total [MiB], memory.reserved [MiB], "
        "memory.used [MiB], memory.free [MiB], compute_mode, compute_cap, utilization.gpu [%], "
        "utilization.memory [%], utilization.encoder [%], utilization.decoder [%], "
        "utilization.jpeg [%], utilization.ofa [%], encoder.stats.sessionCount, "
        "encoder.stats.averageFps, encoder.stats.averageLatency, ecc.mode.current, "
        "ecc.mode.pending, ecc.errors.corrected.volatile.total, "
        "ecc.errors.corrected.aggregate.total, ecc.errors.uncorrected.volatile.total, "
        "ecc.errors.uncorrected.aggregate.total, retired_pages.single_bit_ecc.count, "
        "retired_pages.double_bit.count, retired_pages.pending, remapped_rows.correctable, "
        "remapped_rows.uncorrectable, remapped_rows.pending, remapped_rows.failure, "
        "temperature.gpu, temperature.gpu.tlimit, temperature.memory, power.draw [W], "
        "power.draw.average [W], power.draw.instant [W], power.limit [W], "
        "enforced.power.limit [W], power.default_limit [W], power.min_limit [W], "
        "power.max_limit [W], clocks.current.graphics [MHz], clocks.current.sm [MHz], "
        "clocks.current.memory [MHz], clocks.current.video [MHz], clocks.max.graphics [MHz], "
        "clocks.max.sm [MHz], clocks.max.memory [MHz], mig.mode.current, mig.mode.pending, "
        "hostname\n";

/* nvidia-smi's line for the H100 under load (from the capture) */
static const char h100_line[] =
        "2026/07/14 08:12:53.353, 590.48.01, 1, NVIDIA H100 80GB HBM3, 0000000000000, "
        "GPU-00000000-0000-0000-0000-000000000000, 00000000:00:09.0, 0x0000, 0x00, 0x09, "
        "0x233010DE, 0x16C110DE, 5, 5, 5, 5, 16, 16, 0, Disabled, Enabled, 96.00.A5.00.01, "
        "G520.0200.00.05, [N/A], P0, 0x00000000000001FF, 0x0000000000000000, Not Active, "
        "Not Active, Not Active, Not Active, Not Active, Not Active, Not Active, Not Active, "
        "81559 MiB, 479 MiB, 19818 MiB, 61263 MiB, Default, 9.0, 100 %, 11 %, 0 %, 0 %, 0 %, "
        "0 %, 0, 0, 0, Enabled, Enabled, 0, 0, 0, 0, [N/A], [N/A], [N/A], 0, 0, No, No, 59, 26, "
        "54, 631.95 W, 631.95 W, 625.68 W, 700.00 W, 700.00 W, 700.00 W, 200.00 W, 700.00 W, "
        "1980 MHz, 1980 MHz, 2619 MHz, 1545 MHz, 1980 MHz, 1980 MHz, 2619 MHz, Disabled, "
        "Disabled, [N/A]\n";

/* The RTX 4080 SUPER of linux-x86_64__nvidia-geforce-rtx-4080-super__595.71.05, under load. */
static void
make_rtx4080(struct gpu_snapshot *s)
{
	struct gpu_device *d;

	gpu_snapshot_init(s);
	s->time = 1782467998.761; /* 2026/06/26 09:59:58.761 UTC, 11:59:58.761 there */
	copy(s->nvidia.driver_version, sizeof(s->nvidia.driver_version), "595.71.05");
	d = gpu_snapshot_add_dev(s);
	d->vendor = VENDOR_NVIDIA;
	copy(d->name, sizeof(d->name), "NVIDIA GeForce RTX 4080 SUPER");
	copy(d->uuid, sizeof(d->uuid), "GPU-00000000-0000-0000-0000-000000000000");
	copy(d->pci_bus_id, sizeof(d->pci_bus_id), "00000000:01:00.0");
	copy(d->vbios, sizeof(d->vbios), "95.03.44.00.B2");
	copy(d->inforom, sizeof(d->inforom), "G002.0000.00.03");
	copy(d->compute_cap, sizeof(d->compute_cap), "8.9");
	d->pci_valid = true;
	d->pci_bus = 1;
	d->pci_device_id = 0x270210DE;
	d->pci_subsys_id = 0x51101462;
	dev_set(d, GF_PCIE_GEN, 4);
	dev_set(d, GF_PCIE_GEN_MAX, 4);
	dev_set(d, GF_PCIE_GEN_DEV_MAX, 4);
	dev_set(d, GF_PCIE_WIDTH, 16);
	dev_set(d, GF_PCIE_WIDTH_MAX, 16);
	dev_set(d, GF_DISPLAY_ACTIVE, 1);
	dev_set(d, GF_PERSISTENCE, 0);
	dev_set(d, GF_FAN, 0);
	dev_set(d, GF_PSTATE, 2);
	dev_set(d, GF_CLOCK_REASONS_SUPPORTED, 0x1FF);
	dev_set(d, GF_CLOCK_REASONS, 0);
	dev_set(d, GF_MEM_TOTAL, 16376 * MIB);
	dev_set(d, GF_MEM_RESERVED, 434 * MIB);
	dev_set(d, GF_MEM_USED, 1474 * MIB);
	dev_set(d, GF_MEM_FREE, 14470 * MIB);
	dev_set(d, GF_COMPUTE_MODE, CM_DEFAULT);
	dev_set(d, GF_UTIL_GPU, 7);
	dev_set(d, GF_UTIL_MEM, 2);
	dev_set(d, GF_UTIL_ENC, 72);
	dev_set(d, GF_UTIL_DEC, 0);
	dev_set(d, GF_UTIL_JPEG, 0);
	dev_set(d, GF_UTIL_OFA, 0);
	dev_set(d, GF_ENC_SESSIONS, 2);
	dev_set(d, GF_ENC_FPS, 184);
	dev_set(d, GF_ENC_LATENCY, 62844);
	dev_set(d, GF_TEMP_GPU, 46);
	dev_set(d, GF_POWER_DRAW, 84240 * 1e-3);
	dev_set(d, GF_POWER_AVERAGE, 84240 * 1e-3);
	dev_set(d, GF_POWER_INSTANT, 86410 * 1e-3);
	dev_set(d, GF_POWER_LIMIT_SET, 320000 * 1e-3);
	dev_set(d, GF_POWER_LIMIT, 320000 * 1e-3);
	dev_set(d, GF_POWER_LIMIT_DEFAULT, 320000 * 1e-3);
	dev_set(d, GF_POWER_LIMIT_MIN, 150000 * 1e-3);
	dev_set(d, GF_POWER_LIMIT_MAX, 400000 * 1e-3);
	dev_set(d, GF_CLOCK_GRAPHICS, 2805);
	dev_set(d, GF_CLOCK_SM, 2805);
	dev_set(d, GF_CLOCK_MEM, 11251);
	dev_set(d, GF_CLOCK_VIDEO, 2145);
	dev_set(d, GF_CLOCK_MAX_GRAPHICS, 3165);
	dev_set(d, GF_CLOCK_MAX_SM, 3165);
	dev_set(d, GF_CLOCK_MAX_MEM, 11501);
}

static const char rtx4080_line[] =
        "2026/06/26 11:59:58.761, 595.71.05, 1, NVIDIA GeForce RTX 4080 SUPER, [N/A], "
        "GPU-00000000-0000-0000-0000-000000000000, 00000000:01:00.0, 0x0000, 0x01, 0x00, "
        "0x270210DE, 0x51101462, 4, 4, 4, 4, 16, 16, 0, Enabled, Disabled, 95.03.44.00.B2, "
        "G002.0000.00.03, 0 %, P2, 0x00000000000001FF, 0x0000000000000000, Not Active, "
        "Not Active, Not Active, Not Active, Not Active, Not Active, Not Active, Not Active, "
        "16376 MiB, 434 MiB, 1474 MiB, 14470 MiB, Default, 8.9, 7 %, 2 %, 72 %, 0 %, 0 %, 0 %, "
        "2, 184, 62844, [N/A], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A], "
        "[N/A], [N/A], [N/A], 46, [N/A], N/A, 84.24 W, 84.24 W, 86.41 W, 320.00 W, 320.00 W, "
        "320.00 W, 150.00 W, 400.00 W, 2805 MHz, 2805 MHz, 11251 MHz, 2145 MHz, 3165 MHz, "
        "3165 MHz, 11501 MHz, [N/A], [N/A], [N/A]\n";

static void
test_captures(void)
{
	struct gpu_snapshot s;
	struct strbuf want = STRBUF_INIT;

	set_tz("UTC0");
	make_h100(&s);
	strbuf_addstr(&want, capture_header);
	strbuf_addstr(&want, h100_line);
	is_str(run(QUERY_GPU, capture_fields, "csv", &s), want.buf,
	       "H100 under load: every supported field as nvidia-smi printed it");
	gpu_snapshot_release(&s);

	set_tz("XXX-2"); /* the capture's machine was two hours east of UTC */
	make_rtx4080(&s);
	is_str(run(QUERY_GPU, capture_fields, "csv,noheader", &s), rtx4080_line,
	       "RTX 4080 SUPER under load: every supported field as nvidia-smi printed it");
	gpu_snapshot_release(&s);
	set_tz("UTC0");
	strbuf_release(&want);
}

static void
test_format(void)
{
	struct query_format f;
	struct err err = ERR_INIT;

	ok(!query_parse_format(&f, "csv", &err) && !f.noheader && !f.nounits, "csv");
	ok(!query_parse_format(&f, "csv,noheader", &err) && f.noheader && !f.nounits,
	   "csv,noheader");
	ok(!query_parse_format(&f, "csv,nounits", &err) && !f.noheader && f.nounits, "csv,nounits");
	ok(!query_parse_format(&f, "noheader,csv,nounits", &err) && f.noheader && f.nounits,
	   "options in any order");
	ok(!query_parse_format(&f, " CSV , NoHeader ,", &err) && f.noheader && !f.nounits,
	   "blanks, case and an empty item are fine");
	is_int(query_parse_format(&f, "json", &err), E_USAGE, "json is refused");
	is_str(err.msg,
	       "format option 'json' is not valid; use csv, noheader and nounits, as in '--format=csv,noheader'",
	       "the message names the bad option");
	err_clear(&err);
	f.noheader = true;
	is_int(query_parse_format(&f, "noheader", &err), E_USAGE, "csv is required");
	is_str(err.msg, "format 'noheader' does not say 'csv', the only format there is",
	       "and the message says so");
	ok(f.noheader, "fmt is unchanged on error");
	err_clear(&err);
	is_int(query_parse_format(&f, "", &err), E_USAGE, "an empty format is refused");
}

static void
test_fields(void)
{
	struct gpu_snapshot s;
	struct query q;
	struct err err = ERR_INIT;

	make_h100(&s);
	is_str(run(QUERY_GPU, "gpu_name,gpu_uuid,gpu_serial,gpu_bus_id", "csv", &s),
	       "name, uuid, serial, pci.bus_id\n"
	       "NVIDIA H100 80GB HBM3, GPU-00000000-0000-0000-0000-000000000000, 0000000000000, 00000000:00:09.0\n",
	       "aliases print the main name in the header");
	is_str(run(QUERY_GPU,
	           "clocks.gr,clocks.sm,clocks.mem,clocks.video,clocks.max.gr,clocks.max.mem",
	           "csv", &s),
	       "clocks.current.graphics [MHz], clocks.current.sm [MHz], clocks.current.memory [MHz], clocks.current.video [MHz], clocks.max.graphics [MHz], clocks.max.memory [MHz]\n"
	       "1980 MHz, 1980 MHz, 2619 MHz, 1545 MHz, 1980 MHz, 2619 MHz\n",
	       "short clock names");
	is_str(run(QUERY_GPU,
	           "clocks_throttle_reasons.supported,clocks_throttle_reasons.active,clocks_throttle_reasons.sw_power_cap",
	           "csv", &s),
	       "clocks_event_reasons.supported, clocks_event_reasons.active, clocks_event_reasons.sw_power_cap\n"
	       "0x00000000000001FF, 0x0000000000000000, Not Active\n",
	       "clocks_throttle_reasons.* are the old names of clocks_event_reasons.*");
	is_str(run(QUERY_GPU,
	           "gpu.power.draw.average,gpu.power.draw.instant,gpu.power.requested_limit,gpu.power.current_limit,"
	           "gpu.power.default_limit,gpu.power.min_limit,gpu.power.max_limit",
	           "csv,noheader", &s),
	       "631.95 W, 625.68 W, 700.00 W, 700.00 W, 700.00 W, 200.00 W, 700.00 W\n",
	       "power aliases");
	is_str(run(QUERY_GPU,
	           "inforom.image,retired_pages.sbe,retired_pages.dbe,remapped_rows.sbe,remapped_rows.dbe",
	           "csv", &s),
	       "inforom.img, retired_pages.single_bit_ecc.count, retired_pages.double_bit.count, remapped_rows.correctable, remapped_rows.uncorrectable\n"
	       "G520.0200.00.05, [N/A], [N/A], 0, 0\n",
	       "inforom, retired pages and remapped rows aliases");
	is_str(run(QUERY_GPU, " Name , ,MEMORY.used,, index ", "csv", &s),
	       "name, memory.used [MiB], index\nNVIDIA H100 80GB HBM3, 19818 MiB, 0\n",
	       "blanks, case and empty items");
	is_str(run(QUERY_GPU, "index,index", "csv,noheader", &s), "0, 0\n", "a field may repeat");
	is_str(run(QUERY_GPU, "memory.used,utilization.gpu,power.draw,clocks.sm,fan.speed",
	           "csv,nounits", &s),
	       "memory.used [MiB], utilization.gpu [%], power.draw [W], clocks.current.sm [MHz], fan.speed [%]\n"
	       "19818, 100, 631.95, 1980, [N/A]\n",
	       "nounits drops units from values only, as nvidia-smi does");
	is_str(run(QUERY_GPU, "memory.used,temperature.gpu", "csv,noheader,nounits", &s),
	       "19818, 59\n", "noheader,nounits");

	query_init(&q, QUERY_GPU);
	ok(!query_add_fields(&q, "name,index", &err) && q.nr == 2, "two fields");
	is_int(query_add_fields(&q, "uuid,bogus.field", &err), E_USAGE,
	       "a bad field fails the list");
	is_int(q.nr, 2, "and leaves the query as it was");
	query_release(&q);
	ok(q.nr == 0 && q.field == NULL && q.kind == QUERY_GPU, "release empties the query");

	is_int(query_field_lookup(QUERY_GPU, "gpu_name"), query_field_lookup(QUERY_GPU, "name"),
	       "lookup by alias");
	is_int(query_field_lookup(QUERY_GPU, "fabric.state"), -1,
	       "unsupported fields are not found");
	is_int(query_field_lookup(QUERY_APPS, "name"),
	       query_field_lookup(QUERY_APPS, "process_name"),
	       "in compute apps 'name' is the process name");
	is_str(query_field_name(QUERY_GPU, (unsigned)query_field_lookup(QUERY_GPU, "clocks.gr")),
	       "clocks.current.graphics", "main name of a field");
	is_str(query_field_unit(QUERY_GPU, (unsigned)query_field_lookup(QUERY_GPU, "memory.free")),
	       "MiB", "unit of a field");
	ok(query_field_unit(QUERY_GPU,
	                    (unsigned)query_field_lookup(QUERY_GPU, "temperature.gpu")) == NULL,
	   "temperature has no unit in the header");
	ok(query_field_count(QUERY_GPU) >= 80, "at least 80 --query-gpu fields (%u)",
	   query_field_count(QUERY_GPU));
	is_int(query_field_count(QUERY_APPS), 8, "8 --query-compute-apps fields");
	gpu_snapshot_release(&s);
}

static void
test_errors(void)
{
	is_str(field_error(QUERY_GPU, "name,temperature.gpuu"),
	       "field 'temperature.gpuu' is not a valid field to query; did you mean 'temperature.gpu'?",
	       "a typo gets one suggestion");
	is_str(field_error(QUERY_GPU, "nmae"),
	       "field 'nmae' is not a valid field to query; did you mean 'name'?",
	       "a swap of two letters is one edit");
	is_str(field_error(QUERY_GPU, "memory"),
	       "field 'memory' is not a valid field to query; did you mean 'memory.used', 'memory.free' or 'memory.total'?",
	       "a prefix gets up to three suggestions, closest first");
	is_str(field_error(QUERY_GPU, "memory.used.mib"),
	       "field 'memory.used.mib' is not a valid field to query; did you mean 'memory.used'?",
	       "a longer name suggests its prefix");
	is_str(field_error(QUERY_GPU, "clocks_throttle_reasons.gpu_idel"),
	       "field 'clocks_throttle_reasons.gpu_idel' is not a valid field to query; did you mean 'clocks_throttle_reasons.gpu_idle'?",
	       "the closest name of a field is suggested, alias or not");
	is_str(field_error(QUERY_GPU, "xyzzy"),
	       "field 'xyzzy' is not a valid field to query; see 'gpuscope query --help-query-gpu'",
	       "nothing close: point to the list");
	is_str(field_error(QUERY_GPU, "fabric.state"),
	       "field 'fabric.state' is an nvidia-smi field that gpuscope does not support; see 'gpuscope query --help-query-gpu'",
	       "a known nvidia-smi field gpuscope lacks has its own message");
	is_str(field_error(QUERY_GPU, "clocks.applications.gr"),
	       "field 'clocks.applications.gr' is an nvidia-smi field that gpuscope does not support; see 'gpuscope query --help-query-gpu'",
	       "aliases of unsupported fields are known too");
	is_str(field_error(QUERY_GPU, "pid"),
	       "field 'pid' is not valid with --query-gpu, only with --query-compute-apps",
	       "a compute-apps field in --query-gpu");
	is_str(field_error(QUERY_APPS, "memory.used"),
	       "field 'memory.used' is not valid with --query-compute-apps, only with --query-gpu",
	       "a GPU field in --query-compute-apps");
	is_str(field_error(QUERY_APPS, "used_gpu_mem"),
	       "field 'used_gpu_mem' is not a valid field to query; did you mean 'used_gpu_memory'?",
	       "suggestions in compute apps");
	is_str(field_error(QUERY_GPU, ""), "--query-gpu needs at least one field", "an empty list");
	is_str(field_error(QUERY_APPS, " , "), "--query-compute-apps needs at least one field",
	       "a list of nothing");
	{
		char longname[400];

		memset(longname, 'a', sizeof(longname) - 1);
		longname[sizeof(longname) - 1] = '\0';
		ok(!strncmp(field_error(QUERY_GPU, longname), "field 'aaaa", 11),
		   "a very long name is refused without trouble");
	}
}

/* Check one field of the device for every value in a list. */
struct case_ {
	enum gpu_field f;
	double v;
	const char *field;
	const char *want;
};

static void
test_values(void)
{
	static const struct case_ cases[] = {
		{ GF_MEM_USED, 0, "memory.used", "0 MiB" },
		{ GF_MEM_USED, 1048575, "memory.used", "0 MiB" },
		{ GF_MEM_USED, 1048576, "memory.used", "1 MiB" },
		{ GF_MEM_TOTAL, 143771 * MIB + 1048575, "memory.total", "143771 MiB" },
		{ GF_MEM_FREE, 1.5e15, "memory.free", "1430511474 MiB" },
		{ GF_MEM_RESERVED, -1, "memory.reserved", "[N/A]" },
		{ GF_POWER_DRAW, 0, "power.draw", "0.00 W" },
		{ GF_POWER_DRAW, 26200 * 1e-3, "power.draw", "26.20 W" },
		{ GF_POWER_DRAW, 12.345000000000001, "power.draw", "12.35 W" },
		{ GF_POWER_DRAW, 12.344999999999999, "power.draw", "12.35 W" },
		{ GF_POWER_AVERAGE, 1234.5, "power.draw.average", "1234.50 W" },
		{ GF_POWER_INSTANT, 97.43, "power.draw.instant", "97.43 W" },
		{ GF_POWER_LIMIT_SET, 250, "power.limit", "250.00 W" },
		{ GF_POWER_LIMIT, 350, "enforced.power.limit", "350.00 W" },
		{ GF_POWER_LIMIT_DEFAULT, 350, "power.default_limit", "350.00 W" },
		{ GF_POWER_LIMIT_MIN, 105, "power.min_limit", "105.00 W" },
		{ GF_POWER_LIMIT_MAX, 400, "power.max_limit", "400.00 W" },
		{ GF_PSTATE, 0, "pstate", "P0" },
		{ GF_PSTATE, 8, "pstate", "P8" },
		{ GF_PSTATE, 15, "pstate", "P15" },
		{ GF_PSTATE, 32, "pstate", "[N/A]" },
		{ GF_FAN, 38, "fan.speed", "38 %" },
		{ GF_FAN, 110, "fan.speed", "110 %" },
		{ GF_TEMP_GPU, 63, "temperature.gpu", "63" },
		{ GF_TEMP_MARGIN, -5, "temperature.gpu.tlimit", "-5" },
		{ GF_TEMP_MARGIN, 0, "temperature.gpu.tlimit", "0" },
		{ GF_TEMP_MEM, 39, "temperature.memory", "39" },
		{ GF_UTIL_GPU, 100, "utilization.gpu", "100 %" },
		{ GF_UTIL_MEM, 23, "utilization.memory", "23 %" },
		{ GF_UTIL_ENC, 99, "utilization.encoder", "99 %" },
		{ GF_UTIL_DEC, 1, "utilization.decoder", "1 %" },
		{ GF_UTIL_JPEG, 2, "utilization.jpeg", "2 %" },
		{ GF_UTIL_OFA, 3, "utilization.ofa", "3 %" },
		{ GF_CLOCK_GRAPHICS, 210, "clocks.current.graphics", "210 MHz" },
		{ GF_CLOCK_SM, 300, "clocks.current.sm", "300 MHz" },
		{ GF_CLOCK_MEM, 405, "clocks.current.memory", "405 MHz" },
		{ GF_CLOCK_VIDEO, 540, "clocks.current.video", "540 MHz" },
		{ GF_CLOCK_MAX_GRAPHICS, 2145, "clocks.max.graphics", "2145 MHz" },
		{ GF_CLOCK_MAX_SM, 2145, "clocks.max.sm", "2145 MHz" },
		{ GF_CLOCK_MAX_MEM, 7751, "clocks.max.memory", "7751 MHz" },
		{ GF_PCIE_GEN, 1, "pcie.link.gen.current", "1" },
		{ GF_PCIE_GEN, 3, "pcie.link.gen.gpucurrent", "3" },
		{ GF_PCIE_GEN_MAX, 4, "pcie.link.gen.max", "4" },
		{ GF_PCIE_GEN_DEV_MAX, 5, "pcie.link.gen.gpumax", "5" },
		{ GF_PCIE_WIDTH, 8, "pcie.link.width.current", "8" },
		{ GF_PCIE_WIDTH_MAX, 16, "pcie.link.width.max", "16" },
		{ GF_PERSISTENCE, 0, "persistence_mode", "Disabled" },
		{ GF_PERSISTENCE, 1, "persistence_mode", "Enabled" },
		{ GF_DISPLAY_MODE, 1, "display_mode", "Enabled" },
		{ GF_DISPLAY_ACTIVE, 0, "display_active", "Disabled" },
		{ GF_ECC_MODE, 0, "ecc.mode.current", "Disabled" },
		{ GF_ECC_MODE_PENDING, 1, "ecc.mode.pending", "Enabled" },
		{ GF_MIG_MODE, 1, "mig.mode.current", "Enabled" },
		{ GF_MIG_MODE_PENDING, 0, "mig.mode.pending", "Disabled" },
		{ GF_COMPUTE_MODE, CM_DEFAULT, "compute_mode", "Default" },
		{ GF_COMPUTE_MODE, CM_EXCLUSIVE_THREAD, "compute_mode", "Exclusive_Thread" },
		{ GF_COMPUTE_MODE, CM_PROHIBITED, "compute_mode", "Prohibited" },
		{ GF_COMPUTE_MODE, CM_EXCLUSIVE_PROCESS, "compute_mode", "Exclusive_Process" },
		{ GF_COMPUTE_MODE, 7, "compute_mode", "[N/A]" },
		{ GF_CLOCK_REASONS_SUPPORTED, 0x1FF, "clocks_event_reasons.supported",
		  "0x00000000000001FF" },
		{ GF_CLOCK_REASONS, 0x1, "clocks_event_reasons.active", "0x0000000000000001" },
		{ GF_CLOCK_REASONS, 0x4, "clocks_event_reasons.active", "0x0000000000000004" },
		{ GF_CLOCK_REASONS, 0xFFFFFFFFFFFFF, "clocks_event_reasons.active",
		  "0x000FFFFFFFFFFFFF" },
		{ GF_CLOCK_REASONS, 0x1, "clocks_event_reasons.gpu_idle", "Active" },
		{ GF_CLOCK_REASONS, 0x2, "clocks_event_reasons.applications_clocks_setting",
		  "Active" },
		{ GF_CLOCK_REASONS, 0x4, "clocks_event_reasons.sw_power_cap", "Active" },
		{ GF_CLOCK_REASONS, 0x8, "clocks_event_reasons.hw_slowdown", "Active" },
		{ GF_CLOCK_REASONS, 0x10, "clocks_event_reasons.sync_boost", "Active" },
		{ GF_CLOCK_REASONS, 0x20, "clocks_event_reasons.sw_thermal_slowdown", "Active" },
		{ GF_CLOCK_REASONS, 0x40, "clocks_event_reasons.hw_thermal_slowdown", "Active" },
		{ GF_CLOCK_REASONS, 0x80, "clocks_event_reasons.hw_power_brake_slowdown",
		  "Active" },
		{ GF_CLOCK_REASONS, 0x1FE, "clocks_event_reasons.gpu_idle", "Not Active" },
		{ GF_CLOCK_REASONS, 0x1, "clocks_event_reasons.sync_boost", "Not Active" },
		{ GF_ENC_SESSIONS, 2, "encoder.stats.sessionCount", "2" },
		{ GF_ENC_FPS, 237, "encoder.stats.averageFps", "237" },
		{ GF_ENC_LATENCY, 4271133, "encoder.stats.averageLatency", "4271133" },
		{ GF_ECC_CORR_VOLATILE, 12, "ecc.errors.corrected.volatile.total", "12" },
		{ GF_ECC_CORR_AGGREGATE, 1e12, "ecc.errors.corrected.aggregate.total",
		  "1000000000000" },
		{ GF_ECC_UNCORR_VOLATILE, 1, "ecc.errors.uncorrected.volatile.total", "1" },
		{ GF_ECC_UNCORR_AGGREGATE, 3, "ecc.errors.uncorrected.aggregate.total", "3" },
		{ GF_RETIRED_SBE, 4, "retired_pages.single_bit_ecc.count", "4" },
		{ GF_RETIRED_DBE, 5, "retired_pages.double_bit.count", "5" },
		{ GF_RETIRED_PENDING, 1, "retired_pages.pending", "Yes" },
		{ GF_RETIRED_PENDING, 0, "retired_pages.pending", "No" },
		{ GF_REMAP_CORR, 6, "remapped_rows.correctable", "6" },
		{ GF_REMAP_UNCORR, 7, "remapped_rows.uncorrectable", "7" },
		{ GF_REMAP_PENDING, 1, "remapped_rows.pending", "Yes" },
		{ GF_REMAP_FAILURE, 1, "remapped_rows.failure", "Yes" },
		{ GF_TEMP_GPU, NAN, "temperature.gpu", "[N/A]" },
	};
	struct gpu_snapshot s;
	struct gpu_device *d;

	gpu_snapshot_init(&s);
	d = gpu_snapshot_add_dev(&s);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct case_ *c = &cases[i];

		memset(&d->valid, 0, sizeof(d->valid));
		dev_set(d, c->f, c->v);
		is_str(value(&s, c->field), c->want, "%s = %.17g", c->field, c->v);
	}
	gpu_snapshot_release(&s);
}

static void
test_device_fields(void)
{
	struct gpu_snapshot s;
	struct gpu_device *d;

	gpu_snapshot_init(&s);
	d = gpu_snapshot_add_dev(&s);
	d->index = 3;
	d->pci_valid = true;
	d->pci_domain = 0x10001;
	d->pci_bus = 0xc1;
	d->pci_dev = 0x1f;
	d->pci_device_id = 0x1E8110DE;
	d->pci_subsys_id = 0x40051458;
	copy(d->pci_bus_id, sizeof(d->pci_bus_id), "00010001:C1:1F.0");
	is_str(value(&s, "index"), "3", "index");
	is_str(value(&s, "pci.domain"), "0x10001", "a domain above 0xFFFF keeps its digits");
	is_str(value(&s, "pci.bus"), "0xC1", "bus in upper-case hex");
	is_str(value(&s, "pci.device"), "0x1F", "device in upper-case hex");
	is_str(value(&s, "pci.device_id"), "0x1E8110DE", "device id");
	is_str(value(&s, "pci.sub_device_id"), "0x40051458", "subsystem id");
	is_str(value(&s, "pci.bus_id"), "00010001:C1:1F.0", "bus id as NVML spells it");
	d->pci_valid = false;
	d->pci_device_id = 0;
	d->pci_subsys_id = 0;
	is_str(value(&s, "pci.domain"), "[N/A]", "unknown PCI address");
	is_str(value(&s, "pci.device_id"), "[N/A]", "unknown device id");
	is_str(value(&s, "pci.sub_device_id"), "[N/A]", "unknown subsystem id");

	/* a device with nothing known */
	memset(d, 0, sizeof(*d));
	for (unsigned id = 0; id < query_field_count(QUERY_GPU); id++) {
		const char *name = query_field_name(QUERY_GPU, id);
		const char *want = "[N/A]";

		if (!strcmp(name, "temperature.memory"))
			want = "N/A"; /* nvidia-smi leaves out the brackets there */
		else if (!strcmp(name, "index") || !strcmp(name, "count"))
			want = name[0] == 'i' ? "0" : "1";
		else if (!strcmp(name, "timestamp"))
			continue;
		is_str(value(&s, name), want, "unknown %s", name);
		is_str(value_nounits(&s, name), want, "unknown %s without units", name);
	}
	copy(s.hostname, sizeof(s.hostname), "node17");
	is_str(value(&s, "hostname"), "node17", "hostname");
	gpu_snapshot_release(&s);
}

static void
test_timestamp(void)
{
	struct gpu_snapshot s;

	gpu_snapshot_init(&s);
	gpu_snapshot_add_dev(&s);
	set_tz("UTC0");
	s.time = 1784016758.696;
	is_str(value(&s, "timestamp"), "2026/07/14 08:12:38.696",
	       "milliseconds are not lost to binary fractions");
	s.time = 1784016773.5;
	is_str(value(&s, "timestamp"), "2026/07/14 08:12:53.500", "half a second");
	s.time = 1784016773.9999;
	is_str(value(&s, "timestamp"), "2026/07/14 08:12:53.999",
	       "milliseconds are cut, not rounded");
	s.time = 0;
	is_str(value(&s, "timestamp"), "1970/01/01 00:00:00.000", "the epoch");
	set_tz("XXX-5:30");
	s.time = 1784016773.353;
	is_str(value(&s, "timestamp"), "2026/07/14 13:42:53.353", "local time");
	set_tz("UTC0");
	s.time = NAN;
	is_str(value(&s, "timestamp"), "[N/A]", "no time");
	gpu_snapshot_release(&s);
}

static void
test_devices(void)
{
	struct gpu_snapshot s;
	struct gpu_device *d;
	static const struct {
		enum dev_state st;
		const char *want;
	} states[] = {
		{ DEV_LOST, "[GPU is lost]" },
		{ DEV_RESET_REQUIRED, "[GPU requires reset]" },
		{ DEV_NOT_RESPONDING, "[Timeout]" },
		{ DEV_NO_PERMISSION, "[Insufficient Permissions]" },
		{ DEV_ERROR, "[Unknown Error]" },
	};

	set_tz("UTC0");
	make_h100(&s);
	d = gpu_snapshot_add_dev(&s);
	d->index = 1;
	copy(d->name, sizeof(d->name), "NVIDIA H100 80GB HBM3");
	copy(d->pci_bus_id, sizeof(d->pci_bus_id), "00000000:00:0A.0");
	d->state = DEV_LOST;
	dev_set(d, GF_MEM_TOTAL, 81559 * MIB);
	is_str(run(QUERY_GPU,
	           "index,count,name,pci.bus_id,uuid,memory.total,memory.used,temperature.gpu,temperature.memory,driver_version,timestamp,hostname",
	           "csv", &s),
	       "index, count, name, pci.bus_id, uuid, memory.total [MiB], memory.used [MiB], temperature.gpu, temperature.memory, driver_version, timestamp, hostname\n"
	       "0, 2, NVIDIA H100 80GB HBM3, 00000000:00:09.0, GPU-00000000-0000-0000-0000-000000000000, 81559 MiB, 19818 MiB, 59, 54, 590.48.01, 2026/07/14 08:12:53.353, [N/A]\n"
	       "1, 2, NVIDIA H100 80GB HBM3, 00000000:00:0A.0, [GPU is lost], 81559 MiB, [GPU is lost], [GPU is lost], [GPU is lost], 590.48.01, 2026/07/14 08:12:53.353, [N/A]\n",
	       "a lost GPU: what is known, then nvidia-smi's '[GPU is lost]'");
	gpu_snapshot_release(&s);

	for (size_t i = 0; i < ARRAY_SIZE(states); i++) {
		const char *key = dev_state_key(states[i].st);

		gpu_snapshot_init(&s);
		copy(s.nvidia.driver_version, sizeof(s.nvidia.driver_version), "590.48.01");
		d = gpu_snapshot_add_dev(&s);
		d->state = states[i].st;
		d->index = 4;
		copy(d->pci_bus_id, sizeof(d->pci_bus_id), "00000000:00:0A.0");
		dev_set(d, GF_POWER_LIMIT, 700);
		is_str(value(&s, "power.draw"), states[i].want, "%s: unknown value", key);
		is_str(value_nounits(&s, "memory.used"), states[i].want, "%s: without units", key);
		is_str(value(&s, "name"), states[i].want, "%s: unknown name", key);
		is_str(value(&s, "temperature.memory"), states[i].want, "%s: memory temperature",
		       key);
		is_str(value(&s, "pci.bus_id"), "00000000:00:0A.0", "%s: known bus id kept", key);
		is_str(value(&s, "enforced.power.limit"), "700.00 W", "%s: known value kept", key);
		is_str(value(&s, "index"), "4", "%s: index", key);
		is_str(value(&s, "driver_version"), "590.48.01", "%s: system fields unaffected",
		       key);
		is_str(value(&s, "hostname"), "[N/A]", "%s: unknown system field is [N/A]", key);
		gpu_snapshot_release(&s);
	}

	gpu_snapshot_init(&s);
	is_str(run(QUERY_GPU, "name,memory.used", "csv", &s), "name, memory.used [MiB]\n",
	       "no GPU: the header only");
	is_str(run(QUERY_GPU, "name,memory.used", "csv,noheader", &s), "",
	       "no GPU, no header: nothing");
	gpu_snapshot_release(&s);
}

static struct gpu_proc *
add_proc(struct gpu_snapshot *s, unsigned dev, uint32_t pid, unsigned type, const char *name,
         const char *cmdline, double mem)
{
	struct gpu_proc *p = gpu_snapshot_add_proc(s);

	p->dev = dev;
	p->pid = pid;
	p->type = type;
	p->name = name ? xstrdup(name) : NULL;
	p->cmdline = cmdline ? xstrdup(cmdline) : NULL;
	if (!isnan(mem))
		proc_set(p, PF_GPU_MEM, mem);
	return p;
}

static void
test_apps(void)
{
	struct gpu_snapshot s;
	static const char all[] =
	        "timestamp,gpu_name,gpu_bus_id,gpu_serial,gpu_uuid,pid,process_name,used_gpu_memory";

	set_tz("UTC0");
	make_h100(&s);
	s.time = 1784016773.5;
	add_proc(&s, 0, 11327, PROC_COMPUTE, "memhog", "/root/tools/memhog --size 2560",
	         2566 * MIB);
	add_proc(&s, 0, 11328, PROC_COMPUTE, "memhog", "/root/tools/memhog", 1542 * MIB + 65536);
	add_proc(&s, 0, 11345, PROC_COMPUTE, "gpu_burn", "./gpu_burn -d 60", 15690 * MIB);
	/* from the load capture: these three lines are nvidia-smi's */
	is_str(run(QUERY_APPS, all, "csv", &s),
	       "timestamp, gpu_name, gpu_bus_id, gpu_serial, gpu_uuid, pid, process_name, used_gpu_memory [MiB]\n"
	       "2026/07/14 08:12:53.500, NVIDIA H100 80GB HBM3, 00000000:00:09.0, 0000000000000, GPU-00000000-0000-0000-0000-000000000000, 11327, /root/tools/memhog, 2566 MiB\n"
	       "2026/07/14 08:12:53.500, NVIDIA H100 80GB HBM3, 00000000:00:09.0, 0000000000000, GPU-00000000-0000-0000-0000-000000000000, 11328, /root/tools/memhog, 1542 MiB\n"
	       "2026/07/14 08:12:53.500, NVIDIA H100 80GB HBM3, 00000000:00:09.0, 0000000000000, GPU-00000000-0000-0000-0000-000000000000, 11345, ./gpu_burn, 15690 MiB\n",
	       "compute apps of the H100 capture");
	is_str(run(QUERY_APPS, "pid,name,used_memory", "csv,nounits", &s),
	       "pid, process_name, used_gpu_memory [MiB]\n11327, /root/tools/memhog, 2566\n"
	       "11328, /root/tools/memhog, 1542\n11345, ./gpu_burn, 15690\n",
	       "aliases and nounits");
	gpu_snapshot_release(&s);

	make_h100(&s);
	add_proc(&s, 0, 2165, PROC_COMPUTE | PROC_GRAPHICS, "kwin_wayland", "/usr/bin/kwin_wayland",
	         25 * MIB);
	add_proc(&s, 0, 2954, PROC_GRAPHICS, "plasmashell", "/usr/bin/plasmashell", 120 * MIB);
	add_proc(&s, 0, 5021, PROC_COMPUTE, "ffmpeg", "ffmpeg -hwaccel cuda", NAN);
	add_proc(&s, 0, 6000, PROC_MPS, "mpsclient", NULL, 10 * MIB);
	add_proc(&s, 0, 6001, PROC_COMPUTE, NULL, "", 0);
	add_proc(&s, 0, 6002, PROC_COMPUTE, NULL, "evil\nname\tx y", 0);
	add_proc(&s, 5, 6003, PROC_COMPUTE, "orphan", "orphan", 0);
	is_str(run(QUERY_APPS, "pid,process_name,used_gpu_memory", "csv,noheader", &s),
	       "2165, /usr/bin/kwin_wayland, 25 MiB\n"
	       "5021, ffmpeg, [N/A]\n"
	       "6000, mpsclient, 10 MiB\n"
	       "6001, [N/A], 0 MiB\n"
	       "6002, evil?name?x, 0 MiB\n",
	       "compute and MPS processes only; name from the command line, else the short name");
	gpu_snapshot_release(&s);

	gpu_snapshot_init(&s);
	is_str(run(QUERY_APPS, "pid", "csv", &s), "pid\n", "no process: the header only");
	gpu_snapshot_release(&s);
}

static void
test_help(void)
{
	struct strbuf sb = STRBUF_INIT;

	query_help(QUERY_GPU, &sb);
	ok(strstr(sb.buf, "List of valid properties to query for the switch \"--query-gpu\":\n") ==
	           sb.buf,
	   "gpu help starts as nvidia-smi's");
	ok(strstr(sb.buf, "\n\"name\" or \"gpu_name\"\nProduct name of the GPU.\n") != NULL,
	   "a field with its alias and description");
	ok(strstr(sb.buf,
	          "\n\"clocks_event_reasons.sw_power_cap\" or \"clocks_throttle_reasons.sw_power_cap\"\n") !=
	           NULL,
	   "old names are listed as aliases");
	for (unsigned id = 0; id < query_field_count(QUERY_GPU); id++) {
		char quoted[128];

		snprintf(quoted, sizeof(quoted), "\n\"%s\"", query_field_name(QUERY_GPU, id));
		if (!strstr(sb.buf, quoted))
			ok(0, "help lists %s", quoted + 1);
	}
	ok(!strstr(sb.buf, "fabric.state"), "unsupported fields are not listed");
	strbuf_reset(&sb);
	query_help(QUERY_APPS, &sb);
	ok(strstr(sb.buf, "\"--query-compute-apps\"") != NULL, "compute-apps help");
	ok(strstr(sb.buf, "\n\"used_gpu_memory\" or \"used_memory\"\n") != NULL,
	   "compute-apps help lists aliases");
	strbuf_release(&sb);
}

int
main(void)
{
	test_captures();
	test_format();
	test_fields();
	test_errors();
	test_values();
	test_device_fields();
	test_timestamp();
	test_devices();
	test_apps();
	test_help();
	return done_testing();
}
