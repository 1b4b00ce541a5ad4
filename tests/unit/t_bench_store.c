/*
 * core/benchstore.h: records survive a write and a read unchanged (NaN, throttle
 * reasons, notes); a later run merges with the figures kept; the newest
 * record of the user's and the system's place wins; files are 0644 and
 * written whole; a symlink, a FIFO, a directory, a truncated or malformed
 * file, a record under another GPU's name and a world-writable directory
 * are refused with one line, never followed; the places come from the
 * environment as documented.
 */
#include "core/benchstore.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/err.h"
#include "core/fields.h"
#include "core/strbuf.h"
#include "harness.h"

#define UUID_A "GPU-0c3c1d2e-aaaa-bbbb-cccc-000000000001"
#define UUID_B "GPU-0c3c1d2e-aaaa-bbbb-cccc-000000000002"

static char base[256];

static void
fig(struct bench_record *r, const char *test, double best, double t)
{
	struct bench_figure f;

	bench_figure_init(&f, test);
	snprintf(f.unit, sizeof(f.unit), "%s", test[0] == 's' ? "GB/s" : "GFLOP/s");
	f.best = best;
	f.median = best * 0.98;
	f.time = t;
	bench_record_set(r, &f);
}

static void
record(struct bench_record *r, const char *uuid, double t)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->uuid, sizeof(r->uuid), "%s", uuid);
	snprintf(r->name, sizeof(r->name), "NVIDIA H200");
	snprintf(r->pci_bus_id, sizeof(r->pci_bus_id), "0000:17:00.0");
	snprintf(r->driver, sizeof(r->driver), "550.54.15");
	snprintf(r->host, sizeof(r->host), "node1");
	r->time = t;
}

static void
dir_only(struct bench_store_dirs *d, const char *sub)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->env, sizeof(d->env), "%s/%s", base, sub);
}

static void
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		ok(0, "create %s: %s", path, strerror(errno));
		return;
	}
	fputs(text, f);
	fclose(f);
}

static void
uuids(void)
{
	ok(bench_store_uuid_ok(UUID_A), "a GPU UUID names a file");
	ok(bench_store_uuid_ok("0000-17"), "digits and '-' name a file");
	ok(!bench_store_uuid_ok(""), "an empty UUID does not");
	ok(!bench_store_uuid_ok(NULL), "NULL does not");
	ok(!bench_store_uuid_ok("../etc/passwd"), "a path does not");
	ok(!bench_store_uuid_ok("GPU-1/2"), "a slash does not");
	ok(!bench_store_uuid_ok("GPU 1"), "a blank does not");
	ok(!bench_store_uuid_ok("-rf"), "a leading '-' does not");
	ok(!bench_store_uuid_ok("GPU-\xc3\xa9"), "a byte past ASCII does not");
}

static void
round_trip(void)
{
	struct bench_record r, back = { 0 };
	struct bench_figure f;
	struct strbuf sb = STRBUF_INIT;
	struct err err = ERR_INIT;
	const struct bench_figure *g;

	record(&r, UUID_A, 1764633600);
	bench_figure_init(&f, "stream.triad");
	snprintf(f.unit, sizeof(f.unit), "GB/s");
	f.best = 3950.25;
	f.median = 3901.5;
	f.spec = 4800;
	f.clock_peak = NAN;
	f.link_gbs = 63.015;
	f.time = 1764633601.5;
	snprintf(f.driver, sizeof(f.driver), "550.54.15");
	f.sm_mhz = 1980;
	f.mem_mhz = 2619;
	f.pcie_gen = 5;
	f.pcie_width = 16;
	f.throttle = CR_SW_POWER_CAP | CR_HW_SLOWDOWN;
	snprintf(f.notes, sizeof(f.notes), "a \"quoted\" note\nwith a newline");
	bench_record_set(&r, &f);
	fig(&r, "fma.fp32", 60000, 1764633602);
	bench_record_json(&r, &sb);
	ok(strstr(sb.buf, "\"schema\": \"gpuscope.bench.store/1\"") != NULL, "the schema is named");
	ok(strstr(sb.buf, "\"throttle\": [\"sw_power_cap\", \"hw_slowdown\"]") != NULL,
	   "throttle reasons by their names");
	is_int(bench_record_parse(sb.buf, sb.len, "rec", &back, &err), 0, "it parses back: %s",
	       err.msg);
	is_str(back.uuid, UUID_A, "uuid");
	is_str(back.name, "NVIDIA H200", "name");
	is_str(back.pci_bus_id, "0000:17:00.0", "bus id");
	is_str(back.driver, "550.54.15", "driver");
	is_str(back.host, "node1", "host");
	is_dbl(back.time, 1764633600, 1e-3, "time");
	is_int(back.nr_fig, 2, "two figures");
	g = bench_record_find(&back, "stream.triad");
	ok(g != NULL, "stream.triad is there");
	if (g) {
		is_str(g->unit, "GB/s", "unit");
		is_dbl(g->best, 3950.25, 1e-9, "best");
		is_dbl(g->median, 3901.5, 1e-9, "median");
		is_dbl(g->spec, 4800, 0, "spec");
		ok(isnan(g->clock_peak), "an unknown clock peak stays unknown");
		is_dbl(g->link_gbs, 63.015, 1e-9, "link rate");
		is_dbl(g->time, 1764633601.5, 1e-6, "its own time");
		is_int(g->sm_mhz, 1980, "SM clock");
		is_int(g->mem_mhz, 2619, "memory clock");
		is_int(g->pcie_gen, 5, "link generation");
		is_int(g->pcie_width, 16, "link width");
		is_int(g->throttle, CR_SW_POWER_CAP | CR_HW_SLOWDOWN, "throttle reasons");
		is_str(g->notes, "a \"quoted\" note\nwith a newline", "notes, escaped and back");
	}
	ok(bench_record_find(&back, "mma.bf16") == NULL, "an absent test is not found");
	/* a newer figure replaces, an older one does not */
	fig(&back, "fma.fp32", 50000, 1764633500);
	is_dbl(bench_record_find(&back, "fma.fp32")->best, 60000, 0,
	       "an older figure is not taken");
	fig(&back, "fma.fp32", 61000, 1764633700);
	is_dbl(bench_record_find(&back, "fma.fp32")->best, 61000, 0, "a newer one is");
	bench_record_release(&back);
	bench_record_release(&r);
	strbuf_release(&sb);
}

/* Each bad document is refused with one line that names the file. */
static void
bad_documents(void)
{
	static const struct {
		const char *doc, *want, *what;
	} cases[] = {
		{ "", "empty", "an empty file" },
		{ "{\"schema\": \"gpuscope.bench.store/1\", \"uuid\": \"GPU-1\", \"figu",
		  "malformed", "a truncated file" },
		{ "[1, 2]", "not a JSON object", "an array" },
		{ "{\"schema\": \"gpuscope.bench/1\", \"uuid\": \"GPU-1\", \"figures\": []}",
		  "not a bench store record", "another schema" },
		{ "{\"uuid\": \"GPU-1\", \"figures\": []}", "not a bench store record",
		  "no schema" },
		{ "{\"schema\": \"gpuscope.bench.store/1\", \"uuid\": \"../x\", \"figures\": []}",
		  "'uuid'", "a UUID that is a path" },
		{ "{\"schema\": \"gpuscope.bench.store/1\", \"uuid\": 7, \"figures\": []}",
		  "'uuid' is not a string", "a UUID that is a number" },
		{ "{\"schema\": \"gpuscope.bench.store/1\", \"uuid\": \"GPU-1\"}", "'figures'",
		  "no figures" },
		{ "{\"schema\": \"gpuscope.bench.store/1\", \"uuid\": \"GPU-1\", \"figures\": [3]}",
		  "not an object", "a figure that is a number" },
		{ "{\"schema\": \"gpuscope.bench.store/1\", \"uuid\": \"GPU-1\", \"figures\": "
		  "[{\"unit\": \"GB/s\"}]}",
		  "without a 'test'", "a figure without a test" },
		{ "{\"schema\": \"gpuscope.bench.store/1\", \"uuid\": \"GPU-1\", \"figures\": "
		  "[{\"test\": \"a\", \"best\": \"fast\"}]}",
		  "'best' is not a number", "a best that is a string" },
		{ "{\"schema\": \"gpuscope.bench.store/1\", \"uuid\": \"GPU-1\", \"figures\": "
		  "[{\"test\": \"a\", \"pcie_width\": -16}]}",
		  "'pcie_width'", "a negative width" },
		{ "{\"schema\": \"gpuscope.bench.store/1\", \"uuid\": \"GPU-1\", \"figures\": "
		  "[{\"test\": \"a\", \"throttle\": \"sw_power_cap\"}]}",
		  "'throttle' is not an array", "throttle not an array" },
		{ "{\"schema\": \"gpuscope.bench.store/1\", \"uuid\": \"GPU-1\", \"figures\": "
		  "[{\"test\": \"a\"}, {\"test\": \"a\"}]}",
		  "there twice", "a test twice" },
		{ "{\"schema\": \"gpuscope.bench.store/1\", \"uuid\": \"GPU-1\", \"figures\": "
		  "[{\"test\": \"a\", \"best\": NaN}]}",
		  "malformed", "NaN" },
		{ "{\"schema\": \"gpuscope.bench.store/1\", \"uuid\": \"GPU-1\", \"figures\": "
		  "[{\"test\": \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}]}",
		  "too long", "a test name too long to keep" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct bench_record r = { 0 };
		struct err err = ERR_INIT;
		int rc = bench_record_parse(cases[i].doc, strlen(cases[i].doc), "F.json", &r, &err);

		ok(rc == E_PARSE && strstr(err.msg, cases[i].want) &&
		           !strncmp(err.msg, "F.json", 6) && !strchr(err.msg, '\n') &&
		           r.nr_fig == 0,
		   "%s is refused: %s", cases[i].what, err.msg);
		bench_record_release(&r);
	}
	/* unknown members and throttle names of a later version are passed over */
	{
		const char *doc =
		        "{\"schema\": \"gpuscope.bench.store/1\", \"uuid\": \"GPU-1\", "
		        "\"later\": {\"x\": 1}, \"figures\": [{\"test\": \"a\", "
		        "\"throttle\": [\"future_reason\", \"hw_thermal_slowdown\"], \"x\": []}]}";
		struct bench_record r = { 0 };
		struct err err = ERR_INIT;

		is_int(bench_record_parse(doc, strlen(doc), "F.json", &r, &err), 0,
		       "members a later version adds are passed over: %s", err.msg);
		is_int(r.nr_fig ? r.fig[0].throttle : 0, CR_HW_THERMAL, "known reasons kept");
		ok(r.nr_fig && isnan(r.fig[0].best), "an absent best is unknown");
		bench_record_release(&r);
	}
}

static void
put_get_merge(void)
{
	struct bench_store_dirs d;
	struct bench_record r, got = { 0 };
	struct err err = ERR_INIT;
	char where[4200], path[4200];
	struct stat st;
	mode_t old = umask(077);

	dir_only(&d, "a/b/store");
	record(&r, UUID_A, 1000);
	fig(&r, "stream.triad", 3950, 1000);
	fig(&r, "fma.fp32", 60000, 1000);
	is_int(bench_store_put(&d, &r, where, sizeof(where), &err), 0, "put: %s", err.msg);
	snprintf(path, sizeof(path), "%s/a/b/store/%s.json", base, UUID_A);
	is_str(where, path, "written where told");
	ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644,
	   "the file is 0644 whatever the umask (%o)", (unsigned)(st.st_mode & 0777));
	snprintf(path, sizeof(path), "%s/a/b/store", base);
	ok(stat(path, &st) == 0 && S_ISDIR(st.st_mode), "its directories were made");
	umask(old);
	bench_record_release(&r);

	/* a quick run of stream only keeps the fma figure */
	record(&r, UUID_A, 2000);
	snprintf(r.driver, sizeof(r.driver), "560.28.03");
	fig(&r, "stream.triad", 4100, 2000);
	is_int(bench_store_put(&d, &r, NULL, 0, &err), 0, "a second put: %s", err.msg);
	bench_record_release(&r);
	is_int(bench_store_get(&d, UUID_A, &got, &err), 0, "get: %s", err.msg);
	is_int(got.nr_fig, 2, "both figures kept");
	is_dbl(bench_record_find(&got, "stream.triad")->best, 4100, 0, "the new triad");
	is_dbl(bench_record_find(&got, "stream.triad")->time, 2000, 0, "with its own time");
	is_str(bench_record_find(&got, "stream.triad")->driver, "560.28.03", "and driver");
	is_dbl(bench_record_find(&got, "fma.fp32")->best, 60000, 0, "the old fma");
	is_dbl(bench_record_find(&got, "fma.fp32")->time, 1000, 0, "with its own time");
	is_str(bench_record_find(&got, "fma.fp32")->driver, "550.54.15", "and driver");
	is_str(got.driver, "560.28.03", "the record's driver is the latest run's");
	is_dbl(got.time, 2000, 0, "and its time");
	is_str(got.version, GPUSCOPE_VERSION, "the version is filled in");
	ok(strstr(got.path, UUID_A ".json") != NULL, "the path read is kept");
	bench_record_release(&got);

	is_int(bench_store_get(&d, UUID_B, &got, &err), E_NOTFOUND, "another GPU: not found");
	record(&r, "GPU-../x", 1);
	err_clear(&err);
	is_int(bench_store_put(&d, &r, NULL, 0, &err), E_USAGE, "a UUID that is a path: %s",
	       err.msg);
	err_clear(&err);
	is_int(bench_store_get(&d, "../x", &got, &err), E_USAGE, "get refuses it too");
	bench_record_release(&r);
}

/* What stands where a record should be: refused, never followed, left alone. */
static void
hostile_files(void)
{
	struct bench_store_dirs d;
	struct bench_record r, got = { 0 };
	struct err err = ERR_INIT;
	char dir[4200], path[4400], target[4200];
	struct stat st;

	dir_only(&d, "hostile");
	snprintf(dir, sizeof(dir), "%s/hostile", base);
	mkdir(dir, 0755);
	snprintf(target, sizeof(target), "%s/victim", base);
	write_file(target, "precious\n");
	snprintf(path, sizeof(path), "%s/%s.json", dir, UUID_A);
	ok(symlink(target, path) == 0, "a symlink planted as the record");
	record(&r, UUID_A, 1);
	fig(&r, "stream.triad", 1, 1);
	is_int(bench_store_put(&d, &r, NULL, 0, &err), E_PERM, "put refuses it: %s", err.msg);
	ok(strstr(err.msg, "symbolic link") && strstr(err.msg, path), "saying what and where");
	ok(lstat(path, &st) == 0 && S_ISLNK(st.st_mode), "the symlink is left");
	{
		FILE *f = fopen(target, "r");
		char line[64] = "";

		if (f) {
			if (!fgets(line, sizeof(line), f))
				line[0] = '\0';
			fclose(f);
		}
		is_str(line, "precious\n", "its target is untouched");
	}
	err_clear(&err);
	ok(bench_store_get(&d, UUID_A, &got, &err) == E_PERM && strstr(err.msg, "symbolic link"),
	   "get refuses it: %s", err.msg);
	unlink(path);

	ok(mkfifo(path, 0644) == 0, "a FIFO as the record");
	err_clear(&err);
	ok(bench_store_get(&d, UUID_A, &got, &err) == E_PERM && strstr(err.msg, "not a regular"),
	   "get refuses it without waiting: %s", err.msg);
	err_clear(&err);
	ok(bench_store_put(&d, &r, NULL, 0, &err) < 0 && strstr(err.msg, "not a regular"),
	   "put refuses it: %s", err.msg);
	ok(lstat(path, &st) == 0 && S_ISFIFO(st.st_mode), "the FIFO is left");
	unlink(path);

	ok(mkdir(path, 0755) == 0, "a directory as the record");
	err_clear(&err);
	ok(bench_store_get(&d, UUID_A, &got, &err) == E_PERM, "get refuses it: %s", err.msg);
	err_clear(&err);
	ok(bench_store_put(&d, &r, NULL, 0, &err) < 0, "put refuses it: %s", err.msg);
	rmdir(path);

	write_file(path, "{\"schema\": \"gpuscope.bench.store/1\", \"uuid\": \"" UUID_A
	                 "\", \"figures\": [{\"test\": \"st");
	err_clear(&err);
	ok(bench_store_get(&d, UUID_A, &got, &err) == E_PARSE && strstr(err.msg, path) &&
	           strstr(err.msg, "malformed"),
	   "a truncated record: %s", err.msg);
	err_clear(&err);
	ok(bench_store_put(&d, &r, NULL, 0, &err) == E_PARSE && strstr(err.msg, "remove it"),
	   "put leaves it for a person to see: %s", err.msg);
	ok(stat(path, &st) == 0 && st.st_size < 200, "the truncated file is left as it is");
	unlink(path);

	/* a record of B stored under A's name */
	write_file(path, "{\"schema\": \"gpuscope.bench.store/1\", \"uuid\": \"" UUID_B
	                 "\", \"figures\": []}");
	err_clear(&err);
	ok(bench_store_get(&d, UUID_A, &got, &err) == E_PARSE && strstr(err.msg, "another GPU"),
	   "a record under another GPU's name: %s", err.msg);
	unlink(path);

	/* a directory every user may write to */
	chmod(dir, 0777);
	err_clear(&err);
	ok(bench_store_put(&d, &r, NULL, 0, &err) == E_PERM && strstr(err.msg, "every user"),
	   "a world-writable directory is not used: %s", err.msg);
	chmod(dir, 0755);
	snprintf(path, sizeof(path), "%s/hostile-link", base);
	ok(symlink(dir, path) == 0, "a symlink as the directory");
	dir_only(&d, "hostile-link");
	err_clear(&err);
	ok(bench_store_put(&d, &r, NULL, 0, &err) == E_PERM && strstr(err.msg, "not a directory"),
	   "is refused: %s", err.msg);
	bench_record_release(&r);
	bench_record_release(&got);
}

static void
two_places(void)
{
	struct bench_store_dirs d;
	struct bench_record r, got = { 0 }, *v = NULL;
	struct err err = ERR_INIT;
	char w[4200];
	size_t nr = 0;

	memset(&d, 0, sizeof(d));
	snprintf(d.user, sizeof(d.user), "%s/user/gpuscope/bench", base);
	snprintf(d.system, sizeof(d.system), "%s/sys/bench", base);
	/* the system place does not exist: a user writes to the user's place, root makes it */
	ok(bench_store_write_dir(&d, w, sizeof(w)), "a place to write");
	is_str(w, geteuid() == 0 ? d.system : d.user,
	       geteuid() == 0 ? "root makes the system place" : "others fall back to their own");
	{
		char parent[4200];

		snprintf(parent, sizeof(parent), "%s/sys", base);
		mkdir(parent, 0755);
		mkdir(d.system, 0755);
	}
	ok(bench_store_write_dir(&d, w, sizeof(w)) && !strcmp(w, d.system),
	   "a writable system place is where writes go");

	/* an older record in the system place, a newer one in the user's */
	{
		struct bench_store_dirs only = d;

		only.user[0] = '\0';
		record(&r, UUID_A, 100);
		fig(&r, "stream.triad", 3000, 100);
		fig(&r, "fma.fp64", 30000, 100);
		is_int(bench_store_put(&only, &r, w, sizeof(w), &err), 0, "the system's: %s",
		       err.msg);
		ok(strstr(w, "/sys/bench/") != NULL, "written to the system place");
		bench_record_release(&r);
		only = d;
		snprintf(only.env, sizeof(only.env), "%s", d.user);
		record(&r, UUID_A, 200);
		fig(&r, "stream.triad", 3500, 200);
		is_int(bench_store_put(&only, &r, NULL, 0, &err), 0, "the user's: %s", err.msg);
		bench_record_release(&r);
	}
	is_int(bench_store_get(&d, UUID_A, &got, &err), 0, "get: %s", err.msg);
	is_dbl(got.time, 200, 0, "the newest record wins");
	ok(strstr(got.path, "/user/") != NULL, "the user's");
	bench_record_release(&got);

	/* a put merges what either place has: the fma.fp64 of the system's */
	record(&r, UUID_A, 300);
	fig(&r, "launch.latency", 4.5, 300);
	is_int(bench_store_put(&d, &r, NULL, 0, &err), 0, "put into the system place: %s", err.msg);
	bench_record_release(&r);
	is_int(bench_store_get(&d, UUID_A, &got, &err), 0, "get again");
	is_int(got.nr_fig, 3, "triad, fp64 and latency");
	is_dbl(bench_record_find(&got, "stream.triad")->best, 3500, 0,
	       "the newest triad of the two places");
	ok(bench_record_find(&got, "fma.fp64") != NULL, "the fp64 kept");
	bench_record_release(&got);

	/* list: one record per GPU, sorted, a bad file passed over and told */
	record(&r, UUID_B, 50);
	fig(&r, "stream.triad", 1000, 50);
	bench_store_put(&d, &r, NULL, 0, &err);
	bench_record_release(&r);
	{
		char bad[4200];

		snprintf(bad, sizeof(bad), "%s/GPU-broken.json", d.user);
		write_file(bad, "{");
		snprintf(bad, sizeof(bad), "%s/notes.txt", d.user);
		write_file(bad, "not a record");
	}
	err_clear(&err);
	is_int(bench_store_list(&d, &v, &nr, &err), 0, "list");
	is_int(nr, 2, "two GPUs");
	if (nr == 2) {
		is_str(v[0].uuid, UUID_A, "sorted by UUID");
		is_dbl(v[0].time, 300, 0, "the newest record of A");
		is_str(v[1].uuid, UUID_B, "then B");
	}
	ok(strstr(err.msg, "GPU-broken.json") != NULL, "the bad file is told: %s", err.msg);
	bench_store_list_free(v, nr);

	{
		struct strbuf sb = STRBUF_INIT;

		bench_store_explain(&d, &sb);
		ok(strstr(sb.buf, d.system) && strstr(sb.buf, "readable by every user"),
		   "explain: where writes go and why");
		ok(strstr(sb.buf, d.user) != NULL, "and where reads look");
		strbuf_release(&sb);
	}
}

static const char *const *fake_env;

static const char *
env_of(const char *name)
{
	for (const char *const *e = fake_env; e && *e; e += 2)
		if (!strcmp(e[0], name))
			return e[1];
	return NULL;
}

static void
places(void)
{
	static const char *const with_env[] = { "GPUSCOPE_BENCH_DIR", "/t/store/", "HOME",
		                                "/home/u", NULL };
	static const char *const xdg[] = { "XDG_STATE_HOME", "/x/state", "HOME", "/home/u", NULL };
	static const char *const rel[] = { "XDG_STATE_HOME",     "state", "HOME", "/home/u",
		                           "GPUSCOPE_BENCH_DIR", "rel",   NULL };
	static const char *const none[] = { NULL };
	struct bench_store_dirs d;
	struct strbuf sb = STRBUF_INIT;

	fake_env = with_env;
	bench_store_dirs_init(&d, env_of, "/");
	is_str(d.env, "/t/store", "GPUSCOPE_BENCH_DIR, its trailing slash dropped");
	ok(!d.user[0] && !d.system[0], "is the only place");
	bench_store_explain(&d, &sb);
	ok(strstr(sb.buf, "GPUSCOPE_BENCH_DIR is set") != NULL, "explain says so");
	strbuf_release(&sb);
	fake_env = xdg;
	bench_store_dirs_init(&d, env_of, NULL);
	is_str(d.user, "/x/state/gpuscope/bench", "XDG_STATE_HOME");
	is_str(d.system, BENCH_STORE_SYSTEM_DIR, "and the system place");
	fake_env = rel;
	bench_store_dirs_init(&d, env_of, "/");
	is_str(d.user, "/home/u/.local/state/gpuscope/bench",
	       "a relative XDG_STATE_HOME is ignored, and a relative GPUSCOPE_BENCH_DIR");
	ok(!d.env[0], "is no override");
	bench_store_dirs_init(&d, env_of, "/srv/saved/");
	is_str(d.system, "/srv/saved" BENCH_STORE_SYSTEM_DIR, "under --root: root's system place");
	ok(!d.user[0], "and no user place");
	fake_env = none;
	bench_store_dirs_init(&d, env_of, "/");
	ok(!d.user[0] && !strcmp(d.system, BENCH_STORE_SYSTEM_DIR),
	   "no HOME: the system place only");
}

int
main(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(base, sizeof(base), "%s/t_bench_store.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(base)) {
		ok(0, "mkdtemp: %s", strerror(errno));
		return done_testing();
	}
	uuids();
	round_trip();
	bad_documents();
	put_get_merge();
	hostile_files();
	two_places();
	places();
	{
		char cmd[400];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
		if (system(cmd) != 0)
			diag("could not remove %s", base);
	}
	return done_testing();
}
