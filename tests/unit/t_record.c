/*
 * Tests of the flight recorder (src/record/): exact round trips of varied
 * samples, the mix of keyframes and deltas, a file cut at every byte of its
 * header and of its last record, damage in the middle, reopening after a
 * torn end, refusing files that are not recordings, rotation, seeking by
 * time, the size of a steady sample of 8 GPUs and 50 processes, and a
 * recording of format version 1. Every member: t_record_fields.c.
 *
 * The records are walked here with the framing of docs/record-format.md,
 * so a change of the format shows up here too.
 */
#include "record/record.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/err.h"
#include "core/gpu.h"
#include "core/xalloc.h"
#include "harness.h"
#include "tree.h"

#define T0       1800000000.0 /* 2027-01-15T08:00:00Z */
#define MAX_RECS 512

/* --- samples ------------------------------------------------------------- */

/* A reproducible pseudo-random number from a few integers. */
static uint32_t
hash3(uint32_t a, uint32_t b, uint32_t c)
{
	uint64_t h = 0x9E3779B97F4A7C15ull ^ a;

	h = (h ^ b) * 0xff51afd7ed558ccdull;
	h = (h ^ c) * 0xc4ceb9fe1a85ec53ull;
	return (uint32_t)(h >> 29);
}

/* An H100 as NVML shows it at step, busy with something. */
static void
make_nvidia(struct gpu_device *d, unsigned i, unsigned step)
{
	uint32_t r = hash3(step, i, 1), q = hash3(step, i, 2);
	double used = (double)(1ull << 30) + (double)(r % 70000) * 1048576;

	d->index = i;
	d->vendor = VENDOR_NVIDIA;
	d->state = DEV_OK;
	snprintf(d->name, sizeof(d->name), "NVIDIA H100 80GB HBM3");
	snprintf(d->uuid, sizeof(d->uuid), "GPU-%08x-4c1d-9e5b-77a1-%012x", 0x5d2c0000u + i,
	         0xabcdefu * (i + 1));
	snprintf(d->serial, sizeof(d->serial), "16523220%05u", 40000 + i);
	snprintf(d->pci_bus_id, sizeof(d->pci_bus_id), "00000000:%02X:00.0", 0x18 + 0x10 * i);
	snprintf(d->vbios, sizeof(d->vbios), "96.00.89.00.01");
	snprintf(d->inforom, sizeof(d->inforom), "G520.0200.00.05");
	snprintf(d->board_part, sizeof(d->board_part), "692-2G520-0200-000");
	snprintf(d->brand, sizeof(d->brand), "NVIDIA");
	snprintf(d->architecture, sizeof(d->architecture), "Hopper");
	snprintf(d->compute_cap, sizeof(d->compute_cap), "9.0");
	snprintf(d->driver, sizeof(d->driver), "nvidia");
	snprintf(d->util_source, sizeof(d->util_source), "nvml");
	snprintf(d->mem_source, sizeof(d->mem_source), "v2");
	d->pci_device_id = 0x233010de;
	d->pci_subsys_id = 0x16c110de;
	d->pci_bus = 0x18 + 0x10 * i;
	d->pci_valid = true;
	d->levels_gfx.current = d->levels_mem.current = -1;
	d->handle = i;

	dev_set(d, GF_MEM_TOTAL, 85520809984.0);
	dev_set(d, GF_MEM_RESERVED, 566231040.0);
	dev_set(d, GF_MEM_USED, used);
	dev_set(d, GF_MEM_FREE, 85520809984.0 - 566231040.0 - used);
	dev_set(d, GF_BAR1_TOTAL, 137438953472.0);
	dev_set(d, GF_BAR1_USED, (double)(2 + q % 8) * 1048576);
	dev_set(d, GF_UTIL_GPU, r % 101);
	dev_set(d, GF_UTIL_MEM, q % 61);
	dev_set(d, GF_UTIL_ENC, 0);
	dev_set(d, GF_UTIL_DEC, 0);
	dev_set(d, GF_TEMP_GPU, 40 + r % 30);
	dev_set(d, GF_TEMP_MEM, 45 + q % 20);
	dev_set(d, GF_TEMP_SLOWDOWN, 92);
	dev_set(d, GF_TEMP_SHUTDOWN, 95);
	dev_set(d, GF_TEMP_MARGIN, 92 - (40 + r % 30));
	/* milliwatts and millijoules from NVML, in watts and joules */
	dev_set(d, GF_POWER_DRAW, (double)(100000 + q % 550000) / 1000);
	dev_set(d, GF_POWER_INSTANT, (double)(100000 + r % 550000) / 1000);
	dev_set(d, GF_POWER_LIMIT, 700);
	dev_set(d, GF_POWER_LIMIT_DEFAULT, 700);
	dev_set(d, GF_POWER_LIMIT_MIN, 200);
	dev_set(d, GF_POWER_LIMIT_MAX, 700);
	dev_set(d, GF_ENERGY, (double)(123456789012ull + 1000003ull * i + 350123ull * step) / 1000);
	dev_set(d, GF_CLOCK_GRAPHICS, 1410 + r % 571);
	dev_set(d, GF_CLOCK_SM, 1410 + r % 571);
	dev_set(d, GF_CLOCK_MEM, 2619);
	dev_set(d, GF_CLOCK_VIDEO, 1275 + q % 481);
	dev_set(d, GF_CLOCK_MAX_GRAPHICS, 1980);
	dev_set(d, GF_CLOCK_MAX_SM, 1980);
	dev_set(d, GF_CLOCK_MAX_MEM, 2619);
	dev_set(d, GF_CLOCK_MAX_VIDEO, 1755);
	dev_set(d, GF_PSTATE, 0);
	dev_set(d, GF_CLOCK_REASONS, (r & 3) ? 0 : CR_SW_POWER_CAP);
	dev_set(d, GF_CLOCK_REASONS_SUPPORTED, 0x1ff);
	dev_set(d, GF_PCIE_GEN, 5);
	dev_set(d, GF_PCIE_GEN_MAX, 5);
	dev_set(d, GF_PCIE_GEN_DEV_MAX, 5);
	dev_set(d, GF_PCIE_WIDTH, 16);
	dev_set(d, GF_PCIE_WIDTH_MAX, 16);
	dev_set(d, GF_PCIE_REPLAY, 0);
	dev_set(d, GF_PERSISTENCE, 1);
	dev_set(d, GF_COMPUTE_MODE, CM_DEFAULT);
	dev_set(d, GF_MIG_MODE, 0);
	dev_set(d, GF_ECC_MODE, 1);
	dev_set(d, GF_ECC_CORR_VOLATILE, 0);
	dev_set(d, GF_ECC_UNCORR_VOLATILE, 0);
	dev_set(d, GF_ENC_SESSIONS, 0);
}

/* An AMD GPU (engines, clock levels) and an Intel one (engines, no identity to speak of). */
static void
make_drm(struct gpu_device *d, unsigned i, unsigned step, bool amd)
{
	uint32_t r = hash3(step, i, 3);
	static const char *const amd_eng[] = { "gfx", "compute", "dma", "dec", "enc", "jpeg" };
	static const char *const intel_eng[] = { "render", "copy", "video", "video-enhance" };
	const char *const *eng = amd ? amd_eng : intel_eng;
	unsigned nr = amd ? 6 : 4;

	d->index = i;
	d->vendor = amd ? VENDOR_AMD : VENDOR_INTEL;
	snprintf(d->name, sizeof(d->name), "%s", amd ? "AMD Radeon RX 7800 XT" : "Intel Arc A770");
	snprintf(d->pci_bus_id, sizeof(d->pci_bus_id), "0000:%02x:00.0", 3 + i);
	snprintf(d->driver, sizeof(d->driver), "%s", amd ? "amdgpu" : "i915");
	snprintf(d->card, sizeof(d->card), "card%u", i);
	if (amd)
		snprintf(d->unique_id, sizeof(d->unique_id), "c4d5e6f708192a3b");
	snprintf(d->util_source, sizeof(d->util_source), "%s", amd ? "gpu_busy_percent" : "fdinfo");
	if (!amd)
		snprintf(d->util_note, sizeof(d->util_note), "PMU: permission denied");
	d->nr_engine = nr;
	for (unsigned k = 0; k < nr; k++) {
		snprintf(d->engine[k].name, sizeof(d->engine[k].name), "%s", eng[k]);
		d->engine[k].percent =
		        k == 0 ? (double)(r % 1000) / 10 : (k == 1 ? 0.25 * step : 0);
	}
	d->levels_gfx.current = d->levels_mem.current = -1;
	if (amd) {
		d->levels_gfx.nr = 3;
		d->levels_gfx.mhz[0] = 500;
		d->levels_gfx.mhz[1] = 1800;
		d->levels_gfx.mhz[2] = step >= 8 ? 2254 : 2124;
		d->levels_gfx.current = (int)(r % 3);
		d->levels_mem.nr = 2;
		d->levels_mem.mhz[0] = 96;
		d->levels_mem.mhz[1] = 1218;
		d->levels_mem.current = 1;
		snprintf(d->throttle_detail, sizeof(d->throttle_detail), "%s",
		         r & 1 ? "PPT0, THM_CORE" : "");
	}
	d->backend = 1 + !amd;
	d->handle = 7 * i;
	dev_set(d, GF_UTIL_GPU, r % 101);
	dev_set(d, GF_TEMP_GPU, (double)(40000 + r % 30000) / 1000);
	dev_set(d, GF_POWER_AVERAGE, (double)(r % 300) + 0.5);
	dev_set(d, GF_MEM_TOTAL, 17163091968.0);
	dev_set(d, GF_MEM_USED, (double)(r % 16000) * 1048576);
	dev_set(d, GF_GTT_USED, (double)(r % 2000) * 4096);
	dev_set(d, GF_CLOCK_GRAPHICS, 500 + r % 1800);
	dev_set(d, GF_VOLTAGE_GFX, 650 + r % 500);
	if (amd)
		dev_set(d, GF_FAN_RPM, 900 + r % 1500);
}

static void
set_str(char **slot, const char *s)
{
	free(*slot);
	*slot = s ? xstrdup(s) : NULL;
}

/*
 * A process on GPU dev, as procinfo fills it: CPU time in ticks of 1/100 s
 * and CPU % over the interval since the last sample (an arbitrary double).
 */
static void
make_proc(struct gpu_proc *p, unsigned j, unsigned dev, unsigned step, bool busy)
{
	uint32_t r = hash3(step, j, 4);
	uint64_t ticks = 100000ull * (j + 1) + 97ull * step + (busy ? r % 5 : 0);
	uint64_t prev = 100000ull * (j + 1) + 97ull * (step ? step - 1 : 0) +
	                (busy && step ? hash3(step - 1, j, 4) % 5 : 0);
	double up = (double)(360000 + 100 * step + (r % 3)) / 100;
	double prev_up = (double)(360000 + 100 * (step ? step - 1 : 0) +
	                          (step ? hash3(step - 1, j, 4) % 3 : 0)) /
	                 100;
	char buf[160];

	p->dev = dev;
	p->pid = 10000 + 37 * j;
	p->start_ticks = 1000000 + 13ull * j;
	p->type = PROC_COMPUTE;
	p->host = PHOST_OK;
	set_str(&p->user, j % 3 ? "alice" : "bob");
	set_str(&p->name, "python3");
	snprintf(buf, sizeof(buf), "python3 /work/train.py --model llama-70b --batch 32 --rank %u",
	         j);
	set_str(&p->cmdline, buf);
	snprintf(buf, sizeof(buf), "%012x", 0x635a3e8au + j);
	set_str(&p->container, buf);
	p->container_runtime = "docker";
	snprintf(buf, sizeof(buf), "/system.slice/docker-%012x%052u.scope", 0x635a3e8au + j, 0);
	set_str(&p->cgroup, buf);
	proc_set(p, PF_GPU_MEM, (double)(2000 + r % 20 + 100 * j) * 1048576);
	proc_set(p, PF_SM_UTIL, busy ? r % 101 : 0);
	proc_set(p, PF_MEM_UTIL, busy ? (r >> 8) % 60 : 0);
	proc_set(p, PF_UID, j % 3 ? 1000 : 1001);
	proc_set(p, PF_NSPID, 1 + j);
	proc_set(p, PF_CPU_TIME, (double)ticks / 100);
	proc_set(p, PF_CPU_PERCENT,
	         ((double)ticks / 100 - (double)prev / 100) / (up - prev_up) * 100);
	proc_set(p, PF_RSS, (double)(400000 + (busy ? r % 64 : 0) + 1000 * j) * 4096);
	proc_set(p, PF_START_TIME, (double)(180000000000ull - 360000 + 13 * j) / 100);
}

/* The steady state of a training box: ndev H100s, nproc busy processes spread over them. */
static void
make_fleet(struct gpu_snapshot *s, unsigned step, unsigned ndev, unsigned nproc)
{
	gpu_snapshot_release(s);
	s->time = T0 + step + (double)(hash3(step, 0, 5) % 1000) / 1e6;
	snprintf(s->hostname, sizeof(s->hostname), "dgx-h100-07");
	snprintf(s->nvidia.driver_version, sizeof(s->nvidia.driver_version), "580.95.05");
	snprintf(s->nvidia.nvml_version, sizeof(s->nvidia.nvml_version), "13.580.95.05");
	s->nvidia.cuda_version = 13000;
	snprintf(s->nvidia.library, sizeof(s->nvidia.library),
	         "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1");
	for (unsigned i = 0; i < ndev; i++)
		make_nvidia(gpu_snapshot_add_dev(s), i, step);
	for (unsigned j = 0; j < nproc; j++)
		make_proc(gpu_snapshot_add_proc(s), j, j % ndev, step, true);
}

/* Values that only the raw encoding keeps, or that look like integers and are not. */
static const double odd_values[] = {
	-0.0,  1e300,  5e-324, 0.1 + 0.2,         123.4567, -1.5, 1e18, -42, 1152921504606846976.0,
	0.001, -0.001, 4.9999, 9007199254740993.0
};

/*
 * Sample step of a sequence that changes something different at every
 * step: a lost GPU, empty strings, long UTF-8 command lines, hundreds of
 * processes, notes, processes coming and going, a GPU gone (step 6 on).
 */
static void
make_varied(struct gpu_snapshot *s, unsigned step)
{
	unsigned ndev = step >= 6 && step < 9 ? 2 : 3;
	unsigned nproc = step == 4 ? 300 : 12;
	struct gpu_device *d;

	gpu_snapshot_release(s);
	s->time = T0 + 0.25 * step;
	snprintf(s->hostname, sizeof(s->hostname), "%s", step >= 3 ? "node-b" : "node-a");
	s->simulated = step == 5;
	snprintf(s->nvidia.driver_version, sizeof(s->nvidia.driver_version), "%s",
	         step >= 4 ? "580.95.05" : "575.57.08");
	s->nvidia.cuda_version = step >= 4 ? 13000 : 12090;
	if (step == 1 || step == 2) {
		gpu_snapshot_note(s, "amdgpu: card2 has no gpu_metrics");
		gpu_snapshot_note(s, "NVML: %s", step == 1 ? "ok" : "driver/library mismatch");
	} else if (step == 3) {
		gpu_snapshot_note(s, "%s", "");
	}
	make_nvidia(gpu_snapshot_add_dev(s), 0, step);
	d = gpu_snapshot_add_dev(s);
	make_drm(d, 1, step, true);
	if (step == 2 || step == 3) {
		d->state = DEV_LOST;
		snprintf(d->state_msg, sizeof(d->state_msg), "%s", DEV_LOST_MSG);
		gpu_device_clear_readings(d);
	}
	if (ndev == 3) {
		d = gpu_snapshot_add_dev(s);
		make_drm(d, 2, step, false);
		d->name[0] = d->pci_bus_id[0] = '\0';
		if (step % 2)
			for (unsigned k = 0; k < ARRAY_SIZE(odd_values); k++)
				dev_set(d, (enum gpu_field)(GF_ECC_CORR_VOLATILE + k),
				        odd_values[(k + step) % ARRAY_SIZE(odd_values)]);
		dev_set(d, GF_RAS_CORR, step == 7 ? NAN : step);
	}
	for (unsigned j = 0; j < nproc; j++) {
		struct gpu_proc *p;
		char cmd[4096];
		size_t n = 0;

		if (nproc < 100 && (j + step) % 5 == 0)
			continue; /* comes and goes */
		p = gpu_snapshot_add_proc(s);
		make_proc(p, j, j % ndev, step, j % 2);
		if (j == 3) {
			while (n + 64 < sizeof(cmd))
				n += (size_t)snprintf(
				        cmd + n, sizeof(cmd) - n, "%s",
				        "python3 -c 'print(\"h\xc3\xa9llo w\xc3\xb6rld "
				        "\xe2\x9c\x93 \xe6\x97\xa5\xe6\x9c\xac\")' ");
			set_str(&p->cmdline, cmd);
			set_str(&p->user, step % 2 ? NULL : "");
			set_str(&p->pod, "1f0a8c2e-5b6d-4e7f-8a9b-0c1d2e3f4a5b");
			p->container_runtime = step % 3 ? "kubernetes" : "podman";
		}
		if (j == 5 && step == 2)
			p->container_runtime = "incus"; /* a runtime this gpuscope does not know */
		if (j == 4) {
			set_str(&p->container, NULL);
			set_str(&p->cgroup, NULL);
			p->container_runtime = NULL;
			p->host = step % 2 ? PHOST_PARTIAL : PHOST_NOT_VISIBLE;
			p->gpu_denied = step % 2;
			p->valid &= ~(1u << PF_RSS);
			p->v[PF_RSS] = 0;
		}
		if (p->dev == 1) {
			struct engine_use e[2] = { { "gfx", 0 }, { "", 0 } };

			p->type = PROC_DRM;
			snprintf(e[1].name, sizeof(e[1].name), "%s", step >= 7 ? "dec" : "compute");
			e[0].percent = (double)(hash3(step, j, 6) % 1000) / 10;
			e[1].percent = step;
			gpu_proc_set_engines(p, e, 2);
		}
	}
}

/* --- files ---------------------------------------------------------------- */

static struct rec_options
options(unsigned keyframe_every)
{
	struct rec_options o;

	rec_options_init(&o);
	o.keyframe_every = keyframe_every;
	o.sync_every = 3600; /* tests do not need the disk to agree */
	return o;
}

/* Write samples [from, to) of gen to path; the size of each record into sizes[] when not NULL. */
static int
write_seq(const char *path, const struct rec_options *o,
          void (*gen)(struct gpu_snapshot *, unsigned), unsigned from, unsigned to, size_t *sizes)
{
	struct err err = ERR_INIT;
	struct rec_writer *w;
	struct gpu_snapshot s;
	int rc = rec_writer_open(path, o, &w, &err);

	if (rc < 0) {
		diag("open '%s': %s", path, err.msg);
		return rc;
	}
	gpu_snapshot_init(&s);
	for (unsigned i = from; i < to && rc >= 0; i++) {
		gen(&s, i);
		rc = rec_writer_append(w, &s, &err);
		if (rc < 0)
			diag("append %u: %s", i, err.msg);
		if (sizes)
			sizes[i - from] = rec_writer_last_size(w);
	}
	gpu_snapshot_release(&s);
	if (rec_writer_close(w, &err) < 0 && rc >= 0) {
		diag("close: %s", err.msg);
		rc = -1;
	}
	return rc;
}

static void
fleet_small(struct gpu_snapshot *s, unsigned step)
{
	make_fleet(s, step, 3, 10);
}

static void
fleet_one(struct gpu_snapshot *s, unsigned step)
{
	make_fleet(s, step, 1, 1);
}

static void
fleet_big(struct gpu_snapshot *s, unsigned step)
{
	make_fleet(s, step, 8, 50);
}

/*
 * Read the recording at path and compare its samples with gen's steps
 * want[0..nr) in order. Returns nr when they all match, -1 when the count
 * or a sample differs or reading fails; *skipped gets rec_reader_skipped().
 */
static int
check_read(const char *path, void (*gen)(struct gpu_snapshot *, unsigned), const unsigned *want,
           size_t nr, unsigned long *skipped, bool verbose)
{
	struct err err = ERR_INIT;
	struct rec_reader *r;
	struct gpu_snapshot got, exp;
	size_t n = 0;
	int rc = rec_reader_open(path, &r, &err), bad = 0;

	if (rc < 0) {
		if (verbose)
			diag("open '%s': %s", path, err.msg);
		return -1;
	}
	gpu_snapshot_init(&got);
	gpu_snapshot_init(&exp);
	while ((rc = rec_reader_next(r, &got, &err)) > 0) {
		char why[256];

		if (n >= nr) {
			n++;
			continue;
		}
		gen(&exp, want[n]);
		if (!rec_snapshot_equal(&got, &exp, why, sizeof(why)) && bad++ < 3 && verbose)
			diag("sample %zu (step %u): %s", n, want[n], why);
		n++;
	}
	if (rc < 0 && verbose)
		diag("next: %s", err.msg);
	if (skipped)
		*skipped = rec_reader_skipped(r);
	rec_reader_close(r);
	gpu_snapshot_release(&got);
	gpu_snapshot_release(&exp);
	if (verbose && n != nr)
		diag("%zu samples, wanted %zu", n, nr);
	return rc < 0 || bad || n != nr ? -1 : (int)n;
}

/* want[] = from, from + 1, ... to - 1, appended at *nr. */
static void
range(unsigned *want, size_t *nr, unsigned from, unsigned to)
{
	for (unsigned i = from; i < to; i++)
		want[(*nr)++] = i;
}

struct rec_info {
	size_t off, len; /* of the whole record, frame included */
	int type;
};

static uint32_t
le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The header's length and the records of buf, by the framing of docs/record-format.md. */
static size_t
walk(const unsigned char *buf, size_t len, size_t *hdr, struct rec_info *ri, size_t max)
{
	size_t off, n = 0;

	*hdr = len >= 12 ? (size_t)(buf[10] | buf[11] << 8) : len;
	for (off = *hdr; off + 13 <= len && n < max; n++) {
		size_t rl = 13 + le32(buf + off + 4);

		if (memcmp(buf + off, "\xfbREC", 4) || off + rl > len)
			break;
		ri[n] = (struct rec_info){ off, rl, buf[off + 8] };
		off += rl;
	}
	return n;
}

static size_t
walk_file(const char *path, size_t *hdr, struct rec_info *ri, size_t max)
{
	size_t len, n;
	unsigned char *buf = (unsigned char *)slurp(path, &len);

	n = walk(buf, len, hdr, ri, max);
	free(buf);
	return n;
}

static size_t
file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? (size_t)-1 : (size_t)st.st_size;
}

static bool
exists(const char *path)
{
	struct stat st;

	return !stat(path, &st);
}

static void
cut(const char *path, size_t len)
{
	if (truncate(path, (off_t)len))
		die_errno("cannot truncate", path);
}

/* Flip the bits of the byte at off. */
static void
flip(const char *path, size_t off)
{
	size_t len;
	char *buf = slurp(path, &len);

	if (off >= len)
		bail("flip at %zu past the end of '%s'", off, path);
	buf[off] ^= (char)0xff;
	write_bytes(path, buf, len);
	free(buf);
}

/* --- a file made by hand, from docs/record-format.md ------------------------ */

static uint32_t
crc32_bits(uint32_t crc, const unsigned char *p, size_t n)
{
	crc = ~crc;
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = crc & 1 ? (crc >> 1) ^ 0xEDB88320u : crc >> 1;
	}
	return ~crc;
}

struct bytes {
	unsigned char b[512];
	size_t n;
};

static void
add(struct bytes *x, const void *p, size_t n)
{
	if (x->n + n > sizeof(x->b))
		bail("hand-made file too large");
	memcpy(x->b + x->n, p, n);
	x->n += n;
}

static void
add_varint(struct bytes *x, uint64_t v)
{
	for (; v >= 0x80; v >>= 7)
		add(x, &(unsigned char){ (unsigned char)(v | 0x80) }, 1);
	add(x, &(unsigned char){ (unsigned char)v }, 1);
}

static void
add_le(struct bytes *x, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		add(x, &(unsigned char){ (unsigned char)(v >> (8 * i)) }, 1);
}

/* A keyframe from a newer gpuscope (200 device fields, 20 process fields). */
static void
make_newer_file(const char *path)
{
	struct bytes f = { .n = 0 }, pl = { .n = 0 };
	uint32_t crc;

	add(&f, "\x89GPUREC\n", 8);
	add_le(&f, 1, 2);   /* version */
	add_le(&f, 22, 2);  /* header length: no note */
	add_le(&f, 200, 2); /* device fields */
	add_le(&f, 20, 2);  /* process fields */
	add_le(&f, 0, 2);   /* note length */
	add_le(&f, crc32_bits(0, f.b, f.n), 4);

	add_varint(&pl, 1800000000ull << 3); /* time: an integer, zigzag then << 2 */
	add_varint(&pl, 0);                  /* flags */
	add_varint(&pl, 3);
	add(&pl, "new", 3); /* hostname */
	add_varint(&pl, 0); /* driver */
	add_varint(&pl, 0); /* NVML */
	add_varint(&pl, 0); /* CUDA */
	add_varint(&pl, 0); /* library */
	add_varint(&pl, 0); /* notes */
	add_varint(&pl, 1); /* devices */
	add_varint(&pl, 2 << 2);
	add_varint(&pl, GF_UTIL_GPU);
	add_varint(&pl, 84 << 2); /* 42 */
	add_varint(&pl, 199);     /* a field this gpuscope does not know, raw */
	add_varint(&pl, 2);
	add(&pl, "\x00\x00\x00\x00\x00\x00\xf8\x7f", 8);
	add_varint(&pl, 1);  /* processes */
	add_varint(&pl, 7);  /* pid */
	add_varint(&pl, 0);  /* GPU */
	add_varint(&pl, 99); /* start ticks */
	add_varint(&pl, 2 << 2);
	add_varint(&pl, PF_SM_UTIL);
	add_varint(&pl, 100 << 2); /* 50 */
	add_varint(&pl, 19);       /* unknown, 1 MiB: m 1 at scale 6 */
	add_varint(&pl, 2 << 5 | 6 << 2 | 1);

	add(&f, "\xfbREC", 4);
	add_le(&f, pl.n, 4);
	add_le(&f, 1, 1);
	crc = crc32_bits(0, f.b + f.n - 5, 5);
	add_le(&f, crc32_bits(crc, pl.b, pl.n), 4);
	add(&f, pl.b, pl.n);
	write_bytes(path, f.b, f.n);
}

static void
test_newer(void)
{
	char path[512], name[600];
	struct rec_options o = options(4);
	struct rec_reader *r;
	struct err err = ERR_INIT;
	struct gpu_snapshot s, want;
	bool fields = true;
	int rc;

	tmp_path(path, sizeof(path), "newer.rec");
	make_newer_file(path);
	gpu_snapshot_init(&s);
	rc = rec_reader_open(path, &r, &err);
	ok(rc == 0 && rec_reader_next(r, &s, &err) == 1 && rec_reader_next(r, &s, &err) == 0 &&
	           rec_reader_skipped(r) == 0,
	   "newer: a hand-made keyframe reads %s", err.msg);
	if (rc == 0)
		rec_reader_close(r);
	rc = rec_reader_open(path, &r, &err);
	if (rc == 0 && rec_reader_next(r, &s, &err) == 1) {
		for (unsigned f = 0; f < GF__COUNT; f++)
			fields &= dev_has(&s.dev[0], f) == (f == GF_UTIL_GPU);
		ok(s.time == T0 && !strcmp(s.hostname, "new") && s.nr_dev == 1 && s.nr_proc == 1 &&
		           fields && s.dev[0].v[GF_UTIL_GPU] == 42 && s.proc[0].pid == 7 &&
		           s.proc[0].start_ticks == 99 && s.proc[0].valid == 1u << PF_SM_UTIL &&
		           s.proc[0].v[PF_SM_UTIL] == 50,
		   "newer: fields it does not know are passed over, the others read");
	} else {
		ok(0, "newer: fields it does not know are passed over, the others read");
	}
	if (rc == 0)
		rec_reader_close(r);

	/* appending: the old file is rotated out, since its header describes other fields */
	gpu_snapshot_init(&want);
	make_fleet(&want, 1, 1, 1);
	rc = write_seq(path, &o, fleet_one, 1, 2, NULL);
	r = NULL;
	fmt(name, sizeof(name), "%s.1", path);
	ok(rc == 0 && exists(name) && rec_reader_open(path, &r, &err) == 0,
	   "newer: appending starts a new file, the old one is %s.1", "newer.rec");
	if (rc == 0 && rec_reader_next(r, &s, &err) == 1 && !strcmp(s.hostname, "new") &&
	    rec_reader_next(r, &s, &err) == 1)
		ok(rec_snapshot_equal(&s, &want, NULL, 0), "newer: both samples read in order");
	else
		ok(0, "newer: both samples read in order");
	rec_reader_close(r);
	gpu_snapshot_release(&s);
	gpu_snapshot_release(&want);
}

/*
 * A recording of format version 1 (tests/fixtures/record/README: 3 samples
 * of tests/scenarios/h100x2.scn) still reads, and a writer appending to it
 * moves it to FILE.1 and starts a file of its own version.
 */
static void
test_version1(void)
{
	char src[2300], path[512], name[600];
	struct rec_options o = options(4);
	struct gpu_snapshot s, first[3];
	struct err err = ERR_INIT;
	struct rec_reader *r;
	size_t len, n = 0;
	bool good = true;
	char *buf;
	int rc;

	find_fixtures();
	fmt(src, sizeof(src), "%s/record/v1-h100x2.gsr", fixtures);
	buf = slurp(src, &len);
	tmp_path(path, sizeof(path), "v1.rec");
	write_bytes(path, buf, len);
	free(buf);
	gpu_snapshot_init(&s);
	for (int i = 0; i < 3; i++)
		gpu_snapshot_init(&first[i]);
	rc = rec_reader_open(path, &r, &err);
	ok(rc == 0, "version 1: the recording opens: %s", err.msg);
	while (rc == 0 && (rc = rec_reader_next(r, &s, &err)) > 0) {
		rc = 0;
		good &= s.nr_dev == 2 && !strcmp(s.hostname, "gpu-node-01") &&
		        !strcmp(s.dev[0].name, "NVIDIA H100 80GB HBM3") &&
		        dev_has(&s.dev[0], GF_MEM_TOTAL) && !s.dev[1].xid_watched &&
		        !s.dev[1].nr_xid;
		if (n < 3) {
			first[n] = s;
			gpu_snapshot_init(&s);
		}
		n++;
	}
	ok(rc == 0 && n == 3 && good && rec_reader_skipped(r) == 0,
	   "version 1: 3 samples of 2 H100s, no Xids watched (%zu samples)", n);
	if (r)
		rec_reader_close(r);

	/* appending: the old file becomes FILE.1, both read in order */
	rc = write_seq(path, &o, fleet_one, 1, 2, NULL);
	fmt(name, sizeof(name), "%s.1", path);
	ok(rc == 0 && exists(name) && file_size(name) == len,
	   "version 1: appending moves it, as it was, to v1.rec.1");
	n = 0;
	good = true;
	rc = rec_reader_open(path, &r, &err);
	while (rc == 0 && (rc = rec_reader_next(r, &s, &err)) > 0) {
		if (n < 3)
			good &= rec_snapshot_equal(&s, &first[n], NULL, 0);
		n++;
		rc = 0;
	}
	ok(rc == 0 && n == 4 && good, "version 1: then its 3 samples and the new one read (%zu)",
	   n);
	if (r)
		rec_reader_close(r);
	for (int i = 0; i < 3; i++)
		gpu_snapshot_release(&first[i]);
	gpu_snapshot_release(&s);
}

/* --- tests ---------------------------------------------------------------- */

static void
test_options(void)
{
	struct rec_options o;

	rec_options_init(&o);
	ok(o.max_bytes == 64u << 20 && o.keep == 4 && o.keyframe_every == 60 && o.sync_every == 10,
	   "options: 64 MiB, 4 files, a keyframe every 60 records, a sync every 10 s");
}

static void
test_round_trip(void)
{
	char path[512];
	struct rec_options o = options(4);
	struct rec_info ri[MAX_RECS];
	unsigned want[16];
	size_t nr = 0, hdr, n;
	unsigned long skipped = 1;
	bool types_ok = true;

	tmp_path(path, sizeof(path), "varied.rec");
	ok(write_seq(path, &o, make_varied, 0, 12, NULL) == 0,
	   "round trip: 12 varied samples written");
	range(want, &nr, 0, 12);
	ok(check_read(path, make_varied, want, nr, &skipped, true) == 12 && skipped == 0,
	   "round trip: each read back equal: lost GPU, empty strings, UTF-8, 300 processes, "
	   "notes, odd values, a GPU gone and back");

	/* a keyframe 4 records after the last one, and where the GPUs change (steps 6 and 9) */
	n = walk_file(path, &hdr, ri, MAX_RECS);
	for (size_t i = 0, since = 0; i < n && i < 12; i++) {
		int key = since == 0 || since >= 4 || i == 6 || i == 9;

		if (ri[i].type != (key ? 1 : 2)) {
			diag("record %zu: type %d", i, ri[i].type);
			types_ok = false;
		}
		since = key ? 1 : since + 1;
	}
	ok(n == 12 && types_ok, "round trip: keyframes at 0, 4, 6 (GPU gone) and 9 (back)");

	/* appending to it later starts with a keyframe, and reads on */
	ok(write_seq(path, &o, make_varied, 12, 14, NULL) == 0,
	   "round trip: reopened, 2 more written");
	range(want, &nr, 12, 14);
	n = walk_file(path, &hdr, ri, MAX_RECS);
	ok(n == 14 && ri[12].type == 1 && ri[13].type == 2,
	   "round trip: the first record after reopening is a keyframe");
	ok(check_read(path, make_varied, want, nr, &skipped, true) == 14 && skipped == 0,
	   "round trip: all 14 read back equal");
}

static void
test_equal(void)
{
	struct gpu_snapshot a, b;
	char why[256] = "";
	char runtime[] = "docker";

	gpu_snapshot_init(&a);
	gpu_snapshot_init(&b);
	make_varied(&a, 1);
	make_varied(&b, 1);
	ok(rec_snapshot_equal(&a, &b, why, sizeof(why)), "equal: the same sample");
	b.proc[0].container_runtime = runtime; /* another pointer, the same name */
	ok(rec_snapshot_equal(&a, &b, why, sizeof(why)), "equal: runtimes compare by name");
	b.dev[0].v[GF_FAN] = 42; /* not valid: not compared */
	ok(rec_snapshot_equal(&a, &b, why, sizeof(why)), "equal: values of unknown fields ignored");
	b.dev[0].v[GF_TEMP_GPU] += 1;
	ok(!rec_snapshot_equal(&a, &b, why, sizeof(why)) && strstr(why, "dev[0]") &&
	           strstr(why, field_info(GF_TEMP_GPU)->key),
	   "equal: a value differs: '%s'", why);
	make_varied(&b, 1);
	dev_set(&b.dev[0], GF_FAN, 0);
	ok(!rec_snapshot_equal(&a, &b, why, sizeof(why)) && strstr(why, "known"),
	   "equal: a field known on one side: '%s'", why);
	make_varied(&b, 1);
	a.dev[0].v[GF_TEMP_GPU] = -0.0;
	b.dev[0].v[GF_TEMP_GPU] = 0.0;
	ok(!rec_snapshot_equal(&a, &b, why, sizeof(why)), "equal: -0 and 0 differ (bit for bit)");
	make_varied(&a, 1);
	make_varied(&b, 1);
	set_str(&b.proc[2].user, b.proc[2].user ? NULL : "");
	ok(!rec_snapshot_equal(&a, &b, why, sizeof(why)) && strstr(why, "proc[2]") &&
	           strstr(why, "user"),
	   "equal: NULL and an empty string differ, the member named: '%s'", why);
	make_varied(&b, 1);
	free(b.note[1]);
	b.note[1] = xstrdup("NVML: other");
	ok(!rec_snapshot_equal(&a, &b, NULL, 0), "equal: notes compared (why may be NULL)");
	gpu_snapshot_release(&a);
	gpu_snapshot_release(&b);
}

/* Cut copies of path at every offset in [from, to): each reads want[0..nr) and no error. */
static int
cut_everywhere(const char *path, size_t from, size_t to, const unsigned *want, size_t nr,
               void (*gen)(struct gpu_snapshot *, unsigned))
{
	char copy[512];
	size_t len;
	char *buf = slurp(path, &len);
	int bad = 0;

	tmp_path(copy, sizeof(copy), "cut.rec");
	write_bytes(copy, buf, len);
	for (size_t at = to; at-- > from;) {
		unsigned long skipped = 0;

		cut(copy, at);
		if (check_read(copy, gen, want, nr, &skipped, false) != (int)nr || skipped) {
			if (bad++ < 3) {
				diag("cut at %zu:", at);
				check_read(copy, gen, want, nr, &skipped, true);
			}
		}
	}
	free(buf);
	return bad;
}

static void
test_cut(void)
{
	char path[512];
	struct rec_options o = options(3);
	struct rec_info ri[MAX_RECS];
	unsigned want[16];
	size_t nr = 0, hdr, n;

	/* K D D K D D: the last record is a delta */
	tmp_path(path, sizeof(path), "cut-src.rec");
	write_seq(path, &o, fleet_small, 0, 6, NULL);
	n = walk_file(path, &hdr, ri, MAX_RECS);
	range(want, &nr, 0, 5);
	ok(n == 6 && !cut_everywhere(path, ri[5].off, ri[5].off + ri[5].len, want, nr, fleet_small),
	   "cut: at each of the %zu bytes of a last delta, the 5 samples before it read back",
	   n == 6 ? ri[5].len : 0);

	/* K D D K: the last record is a keyframe */
	tmp_path(path, sizeof(path), "cut-src.rec");
	write_seq(path, &(struct rec_options){ 0, 1, 3, 3600 }, fleet_small, 0, 4, NULL);
	n = walk_file(path, &hdr, ri, MAX_RECS);
	nr = 0;
	range(want, &nr, 0, 3);
	ok(n == 4 && ri[3].type == 1 &&
	           !cut_everywhere(path, ri[3].off, ri[3].off + ri[3].len, want, nr, fleet_small),
	   "cut: at each of the %zu bytes of a last keyframe, the 3 samples before it read back",
	   n == 4 ? ri[3].len : 0);

	/* in the header, or right after it: an empty recording */
	ok(!cut_everywhere(path, 0, hdr + 1, want, 0, fleet_small),
	   "cut: at each of the %zu bytes of the header (and after it), an empty recording", hdr);
}

static void
test_reopen_torn(void)
{
	char path[512];
	struct rec_options o = options(3);
	struct rec_info ri[MAX_RECS];
	size_t hdr, n, cuts[3], bad = 0;

	tmp_path(path, sizeof(path), "torn.rec");
	write_seq(path, &o, fleet_small, 0, 5, NULL);
	n = walk_file(path, &hdr, ri, MAX_RECS);
	if (n != 5)
		bail("torn: %zu records", n);
	cuts[0] = ri[4].off + 1;             /* in the magic */
	cuts[1] = ri[4].off + 11;            /* in the CRC */
	cuts[2] = ri[4].off + ri[4].len - 1; /* one byte short */
	for (size_t c = 0; c < ARRAY_SIZE(cuts); c++) {
		unsigned want[8];
		size_t nr = 0;
		unsigned long skipped = 1;
		struct rec_info ri2[MAX_RECS];
		size_t n2;

		tmp_path(path, sizeof(path), "torn.rec");
		write_seq(path, &o, fleet_small, 0, 5, NULL);
		cut(path, cuts[c]);
		/* steps 10 and 11 appended after the torn end is cut off */
		if (write_seq(path, &o, fleet_small, 10, 12, NULL) < 0)
			bad++;
		n2 = walk_file(path, &hdr, ri2, MAX_RECS);
		range(want, &nr, 0, 4);
		range(want, &nr, 10, 12);
		if (n2 != 6 || ri2[4].off != ri[4].off || ri2[4].type != 1 ||
		    file_size(path) != ri2[5].off + ri2[5].len ||
		    check_read(path, fleet_small, want, nr, &skipped, true) != 6 || skipped) {
			diag("cut at %zu: %zu records", cuts[c], n2);
			bad++;
		}
	}
	ok(!bad, "reopen: a torn last record is cut off, appending goes on with a keyframe");

	/* a torn header: the file is a recording to be */
	{
		unsigned want[1] = { 7 };
		unsigned long skipped = 1;

		tmp_path(path, sizeof(path), "torn.rec");
		write_seq(path, &o, fleet_small, 0, 1, NULL);
		cut(path, hdr / 2);
		ok(write_seq(path, &o, fleet_small, 7, 8, NULL) == 0 &&
		           check_read(path, fleet_small, want, 1, &skipped, true) == 1 && !skipped,
		   "reopen: a torn header is written again, and the sample after it reads");
	}
}

/* Appends that fail (the file size limit: a short write, then EFBIG) leave the file whole. */
static void
test_write_error(void)
{
	char path[512];
	struct rec_options o = options(4);
	struct rec_writer *w;
	struct rec_info ri[MAX_RECS];
	struct err err = ERR_INIT;
	struct gpu_snapshot s;
	struct rlimit old, lim;
	size_t before, hdr, n;
	unsigned want[8];
	size_t nr = 0;
	unsigned long skipped = 1;
	int rc1, rc2, rc3;

	o.sync_every = 0; /* a sync after every record */
	tmp_path(path, sizeof(path), "efbig.rec");
	write_seq(path, &o, fleet_small, 0, 3, NULL);
	before = file_size(path);
	if (getrlimit(RLIMIT_FSIZE, &old))
		bail("getrlimit: %s", strerror(errno));
	signal(SIGXFSZ, SIG_IGN);
	gpu_snapshot_init(&s);
	if (rec_writer_open(path, &o, &w, &err) < 0)
		bail("efbig: %s", err.msg);
	lim = old;
	lim.rlim_cur = before + 100; /* a keyframe is larger */
	if (setrlimit(RLIMIT_FSIZE, &lim))
		bail("setrlimit: %s", strerror(errno));
	fleet_small(&s, 3);
	rc1 = rec_writer_append(w, &s, &err);
	rc2 = (int)file_size(path);
	if (setrlimit(RLIMIT_FSIZE, &old))
		bail("setrlimit: %s", strerror(errno));
	ok(rc1 == E_IO && (size_t)rc2 == before && strstr(err.msg, path),
	   "write error: the append fails, the partial record is cut off: %s", err.msg);
	fleet_small(&s, 4);
	rc3 = rec_writer_append(w, &s, &err);
	rec_writer_close(w, NULL);
	gpu_snapshot_release(&s);
	signal(SIGXFSZ, SIG_DFL);
	n = walk_file(path, &hdr, ri, MAX_RECS);
	range(want, &nr, 0, 3);
	range(want, &nr, 4, 5);
	ok(rc3 == 0 && n == 4 && ri[3].type == 1 &&
	           check_read(path, fleet_small, want, nr, &skipped, true) == 4 && !skipped,
	   "write error: the next append works, as a keyframe, and all read back");
}

/* Write 12 samples (keyframes at 0, 4, 8), damage byte at of record rec, read. */
static void
damage_case(const char *what, size_t rec, size_t at, const unsigned *want, size_t nr,
            unsigned long want_skipped)
{
	char path[512];
	struct rec_options o = options(4);
	struct rec_info ri[MAX_RECS];
	size_t hdr, n;
	unsigned long skipped = 0;
	int got;

	tmp_path(path, sizeof(path), "damage.rec");
	write_seq(path, &o, fleet_small, 0, 12, NULL);
	n = walk_file(path, &hdr, ri, MAX_RECS);
	if (n != 12)
		bail("damage: %zu records", n);
	flip(path, ri[rec].off + at);
	got = check_read(path, fleet_small, want, nr, &skipped, true);
	ok(got == (int)nr && skipped == want_skipped, "damage: %s: %zu samples, %lu skipped", what,
	   nr, want_skipped);
	if (skipped != want_skipped)
		diag("skipped %lu", skipped);
}

static void
test_damage(void)
{
	unsigned want[16];
	size_t nr;
	char path[512];
	struct rec_writer *w;
	struct rec_options o = options(4);
	struct err err = ERR_INIT;
	size_t before;
	unsigned long skipped = 0;

	nr = 0;
	range(want, &nr, 0, 5);
	range(want, &nr, 8, 12);
	damage_case("a payload byte of delta 5", 5, 20, want, nr, 3);
	damage_case("the magic of delta 5", 5, 0, want, nr, 3);
	damage_case("the length of delta 5", 5, 7, want, nr, 3);
	damage_case("the type of delta 5", 5, 8, want, nr, 3);
	damage_case("the CRC of delta 5", 5, 10, want, nr, 3);
	nr = 0;
	range(want, &nr, 0, 4);
	range(want, &nr, 8, 12);
	damage_case("a payload byte of keyframe 4", 4, 40, want, nr, 4);
	nr = 0;
	range(want, &nr, 0, 9);
	damage_case("delta 9, no keyframe after it", 9, 30, want, nr, 3);
	nr = 0;
	range(want, &nr, 0, 11);
	damage_case("the last record: a torn end, not counted", 11, 30, want, nr, 0);

	/* the writer keeps what follows damage in the middle */
	tmp_path(path, sizeof(path), "damage.rec");
	write_seq(path, &o, fleet_small, 0, 12, NULL);
	{
		struct rec_info ri[MAX_RECS];
		size_t hdr;

		walk_file(path, &hdr, ri, MAX_RECS);
		flip(path, ri[5].off + 20);
	}
	before = file_size(path);
	ok(rec_writer_open(path, &o, &w, &err) == 0 && file_size(path) == before,
	   "damage: reopening keeps the good records after the damage %s", err.msg);
	rec_writer_close(w, NULL);
	write_seq(path, &o, fleet_small, 12, 13, NULL);
	nr = 0;
	range(want, &nr, 0, 5);
	range(want, &nr, 8, 13);
	ok(check_read(path, fleet_small, want, nr, &skipped, true) == (int)nr && skipped == 3,
	   "damage: and appends after them");
}

static void
test_refuse(void)
{
	static const char passwd[] = "root:x:0:0:root:/root:/bin/bash\n";
	char path[512], dir[512];
	struct rec_options o = options(4);
	struct err err = ERR_INIT;
	struct rec_writer *w = NULL, *w2 = NULL;
	struct rec_reader *r = NULL;
	char *after;
	size_t len;
	int rc;

	tmp_path(path, sizeof(path), "passwd");
	write_str(path, passwd);
	rc = rec_writer_open(path, &o, &w, &err);
	after = slurp(path, &len);
	ok(rc == E_USAGE && !w && strstr(err.msg, path) && !strcmp(after, passwd),
	   "refuse: a file that is not a recording is not written to: %s", err.msg);
	free(after);
	err_clear(&err);
	ok(rec_reader_open(path, &r, &err) == E_PARSE && !r && strstr(err.msg, path),
	   "refuse: nor read: %s", err.msg);

	err_clear(&err);
	tmp_path(dir, sizeof(dir), "a-dir");
	make_dir(dir);
	ok(rec_writer_open(dir, &o, &w, &err) < 0 && !w, "refuse: a directory: %s", err.msg);

	err_clear(&err);
	tmp_path(path, sizeof(path), "missing.rec");
	ok(rec_reader_open(path, &r, &err) == E_NOTFOUND && strstr(err.msg, path),
	   "refuse: reading a missing file: %s", err.msg);
	err_clear(&err);
	ok(rec_writer_open("/nonexistent-dir/x.rec", &o, &w, &err) == E_NOTFOUND,
	   "refuse: a file in a missing directory: %s", err.msg);

	/* an empty file is a recording to be */
	err_clear(&err);
	tmp_path(path, sizeof(path), "empty.rec");
	write_str(path, "");
	ok(rec_writer_open(path, &o, &w, &err) == 0 && file_size(path) > 0,
	   "refuse: an empty file is taken, and gets a header");
	err_clear(&err);
	ok(rec_writer_open(path, &o, &w2, &err) == E_BUSY && !w2,
	   "refuse: a file another writer holds: %s", err.msg);
	rec_writer_close(w, NULL);

	/* a newer format, a damaged header */
	{
		size_t hlen;
		char *buf = slurp(path, &hlen);

		char version = buf[8];

		ok(version == 3, "refuse: a new file is of format version 3 (%d)", version);
		buf[8] = 4;
		write_bytes(path, buf, hlen);
		err_clear(&err);
		ok(rec_writer_open(path, &o, &w, &err) == E_VERSION, "refuse: format version 4: %s",
		   err.msg);
		err_clear(&err);
		ok(rec_reader_open(path, &r, &err) == E_VERSION, "refuse: reading version 4: %s",
		   err.msg);
		buf[8] = version;
		buf[20] ^= 1; /* in the note */
		write_bytes(path, buf, hlen);
		err_clear(&err);
		ok(rec_writer_open(path, &o, &w, &err) == E_PARSE, "refuse: a damaged header: %s",
		   err.msg);
		err_clear(&err);
		ok(rec_reader_open(path, &r, &err) == E_PARSE, "refuse: reading it: %s", err.msg);
		free(buf);
	}
	err_clear(&err);
	o.keep = 0;
	ok(rec_writer_open(path, &o, &w, &err) == E_USAGE, "refuse: keep 0: %s", err.msg);
}

static void
test_rotation(void)
{
	char path[512], name[600];
	struct rec_options o = options(1000);
	struct rec_info ri[MAX_RECS];
	size_t sizes[64], hdr, n, nr = 0, first_len, delta_len;
	unsigned want[64] = { 0 };
	unsigned long skipped = 1;
	bool fits = true, keys = true;
	struct rec_reader *r;
	struct err err = ERR_INIT;
	struct gpu_snapshot s;
	unsigned first = 0;
	int rc;

	/* how large a keyframe and a delta are */
	tmp_path(path, sizeof(path), "rot.rec");
	write_seq(path, &o, fleet_small, 0, 2, sizes);
	first_len = file_size(path) - sizes[1];
	delta_len = sizes[1];

	/* room for a keyframe and 4 deltas in each file */
	o.max_bytes = first_len + 4 * delta_len + delta_len / 2;
	o.keep = 3;
	tmp_path(path, sizeof(path), "rot.rec");
	write_seq(path, &o, fleet_small, 0, 40, sizes);
	for (unsigned i = 0; i < 3; i++) {
		if (i)
			fmt(name, sizeof(name), "%s.%u", path, i);
		else
			fmt(name, sizeof(name), "%s", path);
		n = walk_file(name, &hdr, ri, MAX_RECS);
		fits &= file_size(name) <= o.max_bytes;
		keys &= n > 0 && ri[0].type == 1;
	}
	fmt(name, sizeof(name), "%s.3", path);
	ok(fits && keys && !exists(name),
	   "rotation: rot.rec, .1 and .2 each within max_bytes and starting with a keyframe; no .3");

	/* read oldest first: a run that ends with the last sample */
	rc = rec_reader_open(path, &r, &err);
	gpu_snapshot_init(&s);
	if (rc == 0 && rec_reader_next(r, &s, &err) > 0)
		first = (unsigned)lround(s.time - T0);
	rec_reader_close(r);
	gpu_snapshot_release(&s);
	range(want, &nr, first, 40);
	ok(rc == 0 && first > 0 &&
	           check_read(path, fleet_small, want, nr, &skipped, true) == (int)nr &&
	           skipped == 0,
	   "rotation: the reader reads the 3 files in order, samples %u to 39 (older ones dropped)",
	   first);

	/* a missing one is skipped */
	fmt(name, sizeof(name), "%s.1", path);
	n = walk_file(name, &hdr, ri, MAX_RECS);
	unlink(name);
	{
		size_t n2 = walk_file(path, &hdr, ri, MAX_RECS), k = 0;

		nr = 0;
		/* rot.rec.2 holds the first samples, rot.rec the last n2 */
		range(want, &nr, first, 40);
		for (size_t i = 0; i < nr; i++)
			if (i < nr - n2 - n || i >= nr - n2)
				want[k++] = want[i];
		nr = k;
	}
	ok(check_read(path, fleet_small, want, nr, &skipped, true) == (int)nr,
	   "rotation: a missing rot.rec.1 is skipped");

	/* every record a keyframe: the one that does not fit starts the next file */
	o.keyframe_every = 1;
	o.max_bytes = 2 * first_len + (first_len - hdr) / 2;
	tmp_path(path, sizeof(path), "rotk.rec");
	write_seq(path, &o, fleet_small, 0, 20, sizes);
	n = walk_file(path, &hdr, ri, MAX_RECS);
	nr = 0;
	range(want, &nr, 20 - 4 - (unsigned)n, 20);
	ok(n == 2 && check_read(path, fleet_small, want, nr, &skipped, true) == (int)nr &&
	           skipped == 0,
	   "rotation: of keyframes only, 2 in each file, the last %zu read back", nr);
	o.keyframe_every = 1000;
	o.max_bytes = first_len + 4 * delta_len + delta_len / 2;

	/* keep 1: the file starts over */
	o.keep = 1;
	tmp_path(path, sizeof(path), "rot1.rec");
	write_seq(path, &o, fleet_small, 0, 20, sizes);
	n = walk_file(path, &hdr, ri, MAX_RECS);
	fmt(name, sizeof(name), "%s.1", path);
	nr = 0;
	range(want, &nr, (unsigned)(20 - n), 20);
	ok(!exists(name) && n > 0 && n < 20 && ri[0].type == 1 &&
	           check_read(path, fleet_small, want, nr, &skipped, true) == (int)nr,
	   "rotation: keep 1 starts the file over (%zu samples left)", n);
}

static void
check_seek(struct rec_reader *r, double t, unsigned want_step, bool then_end, const char *what)
{
	struct err err = ERR_INIT;
	struct gpu_snapshot got, exp;
	char why[256] = "";
	int rc = rec_reader_seek(r, t, &err), n1, n2 = 1;
	bool same;

	gpu_snapshot_init(&got);
	gpu_snapshot_init(&exp);
	n1 = rec_reader_next(r, &got, &err);
	fleet_small(&exp, want_step);
	same = n1 == 1 && rec_snapshot_equal(&got, &exp, why, sizeof(why));
	/* reading goes on from there */
	if (then_end) {
		n2 = rec_reader_next(r, &got, &err) == 0;
	} else if (rec_reader_next(r, &got, &err) == 1) {
		fleet_small(&exp, want_step + 1);
		n2 = rec_snapshot_equal(&got, &exp, why, sizeof(why));
	} else {
		n2 = 0;
	}
	ok(rc == 0 && same && n2, "seek: %s: step %u, then %s", what, want_step,
	   then_end ? "the end" : "the next");
	if (why[0])
		diag("%s", why);
	gpu_snapshot_release(&got);
	gpu_snapshot_release(&exp);
}

static void
test_seek(void)
{
	char path[512];
	struct rec_options o = options(4);
	struct rec_reader *r;
	struct err err = ERR_INIT;
	double first = -1, last = -1;
	struct rec_info ri[MAX_RECS];
	size_t hdr;

	tmp_path(path, sizeof(path), "seek.rec");
	write_seq(path, &o, fleet_small, 0, 20, NULL);
	if (rec_reader_open(path, &r, &err) < 0)
		bail("seek: %s", err.msg);
	rec_reader_span(r, &first, &last);
	ok(first == T0 + (double)(hash3(0, 0, 5) % 1000) / 1e6 &&
	           last == T0 + 19 + (double)(hash3(19, 0, 5) % 1000) / 1e6,
	   "span: the times of the first and last sample");
	check_seek(r, T0 - 100, 0, false, "before the start");
	check_seek(r, T0 + 7 + (double)(hash3(7, 0, 5) % 1000) / 1e6, 7, false, "exactly sample 7");
	check_seek(r, T0 + 8 + (double)(hash3(8, 0, 5) % 1000) / 1e6, 8, false,
	           "exactly sample 8, a keyframe");
	check_seek(r, T0 + 10.9999, 10, false, "between 10 and 11");
	check_seek(r, T0 + 3.9999, 3, false, "just before keyframe 4");
	check_seek(r, T0 + 1e6, 19, true, "after the end");
	check_seek(r, T0 + 1.5, 1, false, "backwards again");
	rec_reader_close(r);

	/* across rotated files */
	o.max_bytes = 8000;
	o.keep = 20;
	tmp_path(path, sizeof(path), "seek-rot.rec");
	write_seq(path, &o, fleet_small, 0, 20, NULL);
	if (rec_reader_open(path, &r, &err) < 0)
		bail("seek: %s", err.msg);
	check_seek(r, T0 + 12.5, 12, false, "in rotated files");
	check_seek(r, T0 + 2.5, 2, false, "in the oldest file");
	rec_reader_close(r);

	/* an empty recording: a header only */
	tmp_path(path, sizeof(path), "seek-empty.rec");
	write_seq(path, &o, fleet_small, 0, 0, NULL);
	ok(walk_file(path, &hdr, ri, MAX_RECS) == 0 && hdr > 0 && file_size(path) == hdr,
	   "empty: a header only");
	if (rec_reader_open(path, &r, &err) < 0)
		bail("seek: %s", err.msg);
	rec_reader_span(r, &first, &last);
	ok(first == 0 && last == 0, "span: 0, 0 when empty");
	ok(rec_reader_seek(r, T0, &err) == E_NOTFOUND, "seek: E_NOTFOUND when empty: %s", err.msg);
	rec_reader_close(r);
}

static void
test_size(void)
{
	char path[512];
	struct rec_options o = options(60);
	size_t sizes[120], key = 0, delta = 0, nkey = 0, ndelta = 0;
	unsigned want[120];
	size_t nr = 0;
	unsigned long skipped = 1;

	tmp_path(path, sizeof(path), "size.rec");
	write_seq(path, &o, fleet_big, 0, 120, sizes);
	for (unsigned i = 0; i < 120; i++) {
		if (i % 60 == 0) {
			key += sizes[i];
			nkey++;
		} else {
			delta += sizes[i];
			ndelta++;
		}
	}
	diag("bytes per sample, 8 GPUs and 50 processes: keyframe %.0f, delta %.0f, all %.0f",
	     (double)key / (double)nkey, (double)delta / (double)ndelta,
	     (double)(key + delta) / 120);
	ok((double)delta / (double)ndelta < 2048,
	   "size: a delta of 8 GPUs and 50 processes < 2 KiB");
	range(want, &nr, 0, 120);
	ok(check_read(path, fleet_big, want, nr, &skipped, true) == 120 && skipped == 0,
	   "size: and all 120 read back equal");
}

int
main(void)
{
	/* fdatasync() on a disk is slow and proves nothing here: use memory when there is some */
	if (!getenv("TMPDIR") && access("/dev/shm", W_OK) == 0)
		setenv("TMPDIR", "/dev/shm", 1);
	make_tmp_dir("t_record");
	test_options();
	test_round_trip();
	test_equal();
	test_cut();
	test_reopen_torn();
	test_write_error();
	test_damage();
	test_refuse();
	test_rotation();
	test_seek();
	test_size();
	test_newer();
	test_version1();
	rm_tree(tmp_dir);
	return done_testing();
}
