/*
 * libFuzzer target: the flight recorder's reader, and its writer's check
 * of an existing file, on arbitrary bytes as a recording.
 *
 * Input: one flags byte, then the file. Flags:
 *   bit 0  then open the file for appending, append one sample and read
 *          the recording again
 *   bit 1  the file is also there as FILE.1 (a rotated predecessor), so the
 *          reader reads it twice
 *   bit 2  keep the CRCs as they are; without it the target first sets
 *          the CRC of the header and of every record it finds (by the
 *          framing of docs/record-format.md) to the right one, so that
 *          mutated payloads reach the decoder instead of failing the check
 *   bits 3-7  ignored: the seeds start with '@' + flags, which reads well
 *
 * The files are written under a scratch tree in /dev/shm (or $TMPDIR, or
 * /tmp), removed at exit. Checked, beyond "no crash, no overflow, no leak":
 * the reader opens the file or fails with E_PARSE or E_VERSION; every
 * sample it returns is one a front end can use (each process on a GPU of
 * the sample, engine and clock level counts within their arrays, strings
 * NUL-terminated inside them, known states); the first samples written to
 * a new recording (a keyframe, then deltas) read back equal and undamaged
 * (so the writer takes whatever the reader makes, exactly); after a sample was read, seeking to the
 * first time succeeds. The writer either refuses the file, leaving it as it was, or appends, and
 * then the last sample read back is the one appended.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/err.h"
#include "core/gpu.h"
#include "fuzz.h"
#include "record/record.h"

#define MAX_SAMPLES 512 /* read no more per input */
#define ROUND_TRIPS 3   /* write the first this many to a new recording */

int LLVMFuzzerInitialize(int *argc, char ***argv);

static char path[4200], path1[4300], rt_path[4200];
static struct rec_options opts;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *base = fuzz_scratch("record");

	(void)argc;
	(void)argv;
	snprintf(path, sizeof(path), "%s/in.rec", base);
	snprintf(path1, sizeof(path1), "%s.1", path);
	snprintf(rt_path, sizeof(rt_path), "%s/rt.rec", base);
	rec_options_init(&opts);
	opts.sync_every = 1e9; /* the disk need not agree */
	opts.keep = 2;         /* a rotation (other field counts) makes FILE.1 only */
	opts.keyframe_every = 1000;
	return 0;
}

static uint32_t
crc32_bits(uint32_t crc, const uint8_t *p, size_t n)
{
	crc = ~crc;
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = crc & 1 ? (crc >> 1) ^ 0xEDB88320u : crc >> 1;
	}
	return ~crc;
}

static uint32_t
le(const uint8_t *p, unsigned n)
{
	uint32_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (uint32_t)p[i] << (8 * i);
	return v;
}

static void
put_le32(uint8_t *p, uint32_t v)
{
	for (unsigned i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Set the CRCs of the header and of each record that fits to the right ones. */
static void
fix_crcs(uint8_t *b, size_t n)
{
	size_t off = 0;

	if (n >= 22 && !memcmp(b, "\x89GPUREC\n", 8)) {
		size_t hl = le(b + 10, 2);

		if (hl >= 22 && hl <= n) {
			put_le32(b + hl - 4, crc32_bits(0, b, hl - 4));
			off = hl;
		}
	}
	while (off + 13 <= n) {
		size_t len = le(b + off + 4, 4);

		if (memcmp(b + off, "\xfbREC", 4) || len > n - off - 13) {
			off++;
			continue;
		}
		put_le32(b + off + 9, crc32_bits(crc32_bits(0, b + off + 4, 5), b + off + 13, len));
		off += 13 + len;
	}
}

static void
put_file(const char *p, const uint8_t *data, size_t size)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	FUZZ_CHECK(fd >= 0, "cannot create '%s': %s", p, strerror(errno));
	FUZZ_CHECK(size == 0 || write(fd, data, size) == (ssize_t)size, "cannot write '%s'", p);
	close(fd);
}

static char *
get_file(const char *p, size_t *size)
{
	struct stat st;
	char *buf;
	int fd = open(p, O_RDONLY | O_CLOEXEC);

	FUZZ_CHECK(fd >= 0 && !fstat(fd, &st), "cannot read '%s'", p);
	*size = (size_t)st.st_size;
	buf = malloc(*size + 1);
	FUZZ_CHECK(buf != NULL, "out of memory");
	FUZZ_CHECK(*size == 0 || read(fd, buf, *size) == (ssize_t)*size, "short read of '%s'", p);
	close(fd);
	return buf;
}

static void
check_str(const char *s, size_t size, const char *what)
{
	FUZZ_CHECK(strnlen(s, size) < size, "%s not NUL-terminated in its %zu bytes", what, size);
}

static void
check_engines(const struct engine_use *e, unsigned nr)
{
	FUZZ_CHECK(nr <= GPU_MAX_ENGINES, "%u engines", nr);
	for (unsigned i = 0; i < nr; i++)
		check_str(e[i].name, sizeof(e[i].name), "an engine name");
}

static void
check_levels(const struct clock_levels *l)
{
	FUZZ_CHECK(l->nr <= 16 && l->current >= -1 && l->current < 16,
	           "clock levels: %u, current %d", l->nr, l->current);
}

/* What a front end relies on. */
static void
check_sample(const struct gpu_snapshot *s)
{
	check_str(s->hostname, sizeof(s->hostname), "hostname");
	check_str(s->nvidia.driver_version, sizeof(s->nvidia.driver_version), "driver version");
	check_str(s->nvidia.nvml_version, sizeof(s->nvidia.nvml_version), "NVML version");
	check_str(s->nvidia.library, sizeof(s->nvidia.library), "library");
	for (size_t i = 0; i < s->nr_note; i++)
		FUZZ_CHECK(s->note[i] != NULL, "note %zu is NULL", i);
	for (size_t i = 0; i < s->nr_dev; i++) {
		const struct gpu_device *d = &s->dev[i];

		FUZZ_CHECK((unsigned)d->state <= DEV_SUSPENDED &&
		                   (unsigned)d->vendor <= VENDOR_OTHER,
		           "GPU %zu: state %d, vendor %d", i, d->state, d->vendor);
		check_str(d->name, sizeof(d->name), "name");
		check_str(d->uuid, sizeof(d->uuid), "uuid");
		check_str(d->state_msg, sizeof(d->state_msg), "state_msg");
		check_str(d->pci_bus_id, sizeof(d->pci_bus_id), "pci_bus_id");
		check_str(d->mem_source, sizeof(d->mem_source), "mem_source");
		check_str(d->throttle_detail, sizeof(d->throttle_detail), "throttle_detail");
		check_engines(d->engine, d->nr_engine);
		check_levels(&d->levels_gfx);
		check_levels(&d->levels_mem);
	}
	for (size_t i = 0; i < s->nr_proc; i++) {
		const struct gpu_proc *p = &s->proc[i];

		FUZZ_CHECK(p->dev < s->nr_dev, "process %zu on GPU %u of %zu", i, p->dev,
		           s->nr_dev);
		FUZZ_CHECK((unsigned)p->host <= PHOST_NOT_VISIBLE, "process %zu: host %d", i,
		           p->host);
		check_engines(p->engine, p->nr_engine);
	}
}

/* s[0..n) written to a new recording (as a keyframe and deltas) read back equal. */
static void
round_trip(const struct gpu_snapshot *s, size_t n)
{
	struct err err = ERR_INIT;
	struct rec_writer *w;
	struct rec_reader *r;
	struct gpu_snapshot back;
	char why[256] = "";
	int rc;

	if (!n)
		return;
	unlink(rt_path);
	rc = rec_writer_open(rt_path, &opts, &w, &err);
	FUZZ_CHECK(rc == 0, "cannot open a new recording: %s", err.msg);
	for (size_t i = 0; i < n; i++) {
		rc = rec_writer_append(w, &s[i], &err);
		FUZZ_CHECK(rc == 0, "sample %zu read cannot be written: %s", i, err.msg);
	}
	FUZZ_CHECK(rec_writer_close(w, &err) == 0, "close: %s", err.msg);
	FUZZ_CHECK(rec_reader_open(rt_path, &r, &err) == 0, "reopen: %s", err.msg);
	gpu_snapshot_init(&back);
	for (size_t i = 0; i < n; i++) {
		FUZZ_CHECK(rec_reader_next(r, &back, &err) == 1,
		           "sample %zu written is not read: %s", i, err.msg);
		FUZZ_CHECK(rec_snapshot_equal(&s[i], &back, why, sizeof(why)),
		           "sample %zu differs after a round trip: %s", i, why);
	}
	FUZZ_CHECK(rec_reader_next(r, &back, &err) == 0, "more read than written");
	FUZZ_CHECK(rec_reader_skipped(r) == 0, "damage in a recording just written");
	gpu_snapshot_release(&back);
	rec_reader_close(r);
}

/*
 * Read the recording (at most MAX_SAMPLES when checking round trips);
 * returns how many samples, the last one in *last.
 */
static size_t
read_all(struct gpu_snapshot *last, bool round_trips)
{
	struct err err = ERR_INIT;
	struct rec_reader *r;
	struct gpu_snapshot s, kept[ROUND_TRIPS];
	double first = 0, end = 0;
	size_t n = 0;
	int rc = rec_reader_open(path, &r, &err);

	if (rc < 0) {
		FUZZ_CHECK(rc == E_PARSE || rc == E_VERSION, "open: %d %s", rc, err.msg);
		return 0;
	}
	gpu_snapshot_init(&s);
	while ((n < MAX_SAMPLES || !round_trips) && (rc = rec_reader_next(r, &s, &err)) > 0) {
		check_sample(&s);
		if (round_trips && n < ROUND_TRIPS) {
			kept[n] = s;
			gpu_snapshot_init(&s);
		}
		if (last) {
			gpu_snapshot_release(last);
			*last = s;
			gpu_snapshot_init(&s);
		}
		n++;
	}
	FUZZ_CHECK(rc >= 0, "next: %d %s", rc, err.msg);
	if (round_trips) {
		round_trip(kept, n < ROUND_TRIPS ? n : ROUND_TRIPS);
		for (size_t i = 0; i < n && i < ROUND_TRIPS; i++)
			gpu_snapshot_release(&kept[i]);
	}
	rec_reader_span(r, &first, &end);
	if (n) {
		rc = rec_reader_seek(r, first, &err);
		FUZZ_CHECK(rc == 0, "seek to the first sample: %d %s", rc, err.msg);
		rc = rec_reader_next(r, &s, &err);
		FUZZ_CHECK(rc >= 0, "next after seek: %d %s", rc, err.msg);
		rec_reader_seek(r, isnan(end) ? 0 : end + 1, &err);
		rec_reader_next(r, &s, &err);
	}
	gpu_snapshot_release(&s);
	rec_reader_close(r);
	return n;
}

/* The sample the writer appends. */
static void
make_sample(struct gpu_snapshot *s)
{
	struct gpu_device *d = gpu_snapshot_add_dev(s);
	struct gpu_proc *p;

	s->time = 1800000000.25;
	snprintf(s->hostname, sizeof(s->hostname), "fuzz");
	d->levels_gfx.current = d->levels_mem.current = -1;
	snprintf(d->name, sizeof(d->name), "NVIDIA H100");
	snprintf(d->uuid, sizeof(d->uuid), "GPU-00000000-1111-2222-3333-444444444444");
	dev_set(d, GF_UTIL_GPU, 42);
	dev_set(d, GF_POWER_DRAW, 312.456);
	p = gpu_snapshot_add_proc(s);
	p->pid = 4242;
	proc_set(p, PF_CPU_PERCENT, 97.123456789);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct err err = ERR_INIT;
	struct rec_writer *w = NULL;
	struct gpu_snapshot last, want;
	unsigned flags = size ? data[0] : 0;
	char *before, *after, why[256] = "";
	size_t n, before_len, after_len;
	uint8_t *file;
	int rc;

	if (size) {
		data++;
		size--;
	}
	file = malloc(size ? size : 1);
	FUZZ_CHECK(file != NULL, "out of memory");
	if (size)
		memcpy(file, data, size);
	if (!(flags & 4))
		fix_crcs(file, size);
	put_file(path, file, size);
	if (flags & 2)
		put_file(path1, file, size);
	else
		unlink(path1);
	free(file);
	read_all(NULL, true);
	if (!(flags & 1))
		return 0;

	before = get_file(path, &before_len);
	rc = rec_writer_open(path, &opts, &w, &err);
	if (rc < 0) {
		FUZZ_CHECK(rc == E_USAGE || rc == E_PARSE || rc == E_VERSION, "writer: %d %s", rc,
		           err.msg);
		after = get_file(path, &after_len);
		FUZZ_CHECK(after_len == before_len && !memcmp(before, after, after_len),
		           "a file refused was changed (%s)", err.msg);
		free(before);
		free(after);
		return 0;
	}
	free(before);
	gpu_snapshot_init(&want);
	gpu_snapshot_init(&last);
	make_sample(&want);
	rc = rec_writer_append(w, &want, &err);
	FUZZ_CHECK(rc == 0, "append: %s", err.msg);
	FUZZ_CHECK(rec_writer_close(w, &err) == 0, "close: %s", err.msg);
	n = read_all(&last, false);
	FUZZ_CHECK(n >= 1 && rec_snapshot_equal(&last, &want, why, sizeof(why)),
	           "the sample appended is not the last read back (%zu read): %s", n, why);
	gpu_snapshot_release(&last);
	gpu_snapshot_release(&want);
	return 0;
}
