/*
 * Tests of the setup.cuda.toolkit* checks on the fixture trees of
 * tests/fixtures/doctor/toolkit: toolkits found through PATH, CUDA_HOME,
 * /usr/local/cuda(-*), Debian's package and LD_LIBRARY_PATH, their versions
 * read from version.json, version.txt, cuda_runtime_api.h or libcudart's
 * name, against drivers told by NVML or the snapshot; each finding
 * triggered by one case and cleared by another, every id in the catalog.
 */
#include "doctor/doctor.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/nvml_probe.h"
#include "core/config.h"
#include "core/gpu.h"
#include "doctor/cudaver.h"
#include "doctor_test.h"
#include "harness.h"
#include "tree.h"

/* One run: a fixture root, an environment, and what is known of the driver. */
struct tk_case {
	const char *fixture;     /* under doctor/toolkit */
	const char *path;        /* PATH */
	const char *cuda_home;   /* CUDA_HOME */
	const char *ld;          /* LD_LIBRARY_PATH */
	const char *nvml_driver; /* NVML's driver version; NULL: NVML did not load */
	int nvml_cuda;
	const char *snap_driver; /* the snapshot's driver version; NULL: no snapshot */
	const char *gpu;         /* an NVIDIA GPU's name in the snapshot, or NULL */
};

static const struct tk_case *cur;

static const char *
test_env(const char *name)
{
	if (!strcmp(name, "PATH"))
		return cur->path;
	if (!strcmp(name, "CUDA_HOME"))
		return cur->cuda_home;
	if (!strcmp(name, "LD_LIBRARY_PATH"))
		return cur->ld;
	return NULL;
}

static int catalog_ok = 1;

static void
run(const struct tk_case *c, struct dr_report *r)
{
	char root[4096], sub[256];
	struct gs_config cfg;
	struct dr_ctx ctx;
	struct nvml_probe nvml;
	struct gpu_snapshot snap;

	snprintf(sub, sizeof(sub), "doctor/toolkit/%s", c->fixture);
	if (c->fixture[0] == '/') /* a tree made by the test */
		snprintf(root, sizeof(root), "%s", c->fixture);
	else
		join(root, sizeof(root), fixtures, sub);
	gs_config_init(&cfg);
	cfg.root = root;
	memset(&ctx, 0, sizeof(ctx));
	memset(&nvml, 0, sizeof(nvml));
	ctx.cfg = &cfg;
	ctx.getenv = test_env;
	cur = c;
	if (c->nvml_driver) {
		nvml.loaded = true;
		nvml.init_rc = 0;
		snprintf(nvml.library, sizeof(nvml.library),
		         "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1");
		snprintf(nvml.driver_version, sizeof(nvml.driver_version), "%s", c->nvml_driver);
		nvml.cuda_version = c->nvml_cuda;
	} else {
		nvml.init_rc = -1;
		snprintf(nvml.load_error, sizeof(nvml.load_error),
		         "libnvidia-ml.so.1: cannot open shared object file");
	}
	ctx.nvml = &nvml;
	gpu_snapshot_init(&snap);
	if (c->snap_driver || c->gpu) {
		if (c->snap_driver)
			snprintf(snap.nvidia.driver_version, sizeof(snap.nvidia.driver_version),
			         "%s", c->snap_driver);
		if (c->gpu) {
			struct gpu_device *d = gpu_snapshot_add_dev(&snap);

			d->vendor = VENDOR_NVIDIA;
			snprintf(d->name, sizeof(d->name), "%s", c->gpu);
		}
		ctx.snap = &snap;
	}
	dr_check_cuda_toolkit(&ctx, r);
	for (size_t i = 0; i < r->nr; i++)
		if (!dr_explain_find(r->f[i].id)) {
			diag("'%s' has no explanation", r->f[i].id);
			catalog_ok = 0;
		}
	gpu_snapshot_release(&snap);
}

static void
dump(const struct dr_report *r)
{
	for (size_t i = 0; i < r->nr; i++) {
		diag("%s [%s] %s", r->f[i].id, dr_severity_key(r->f[i].severity), r->f[i].title);
		for (size_t j = 0; getenv("TK_DEBUG") && j < r->f[i].nr_evidence; j++)
			diag("    %s", r->f[i].evidence[j]);
	}
}

#define SYS_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static void
test_cuda124(void)
{
	struct dr_report r = DR_REPORT_INIT;
	const struct dr_finding *f;
	struct tk_case ok_case = { "cuda124",   "/usr/local/cuda/bin:" SYS_PATH,
		                   NULL,        NULL,
		                   "550.54.15", 12040,
		                   NULL,        "NVIDIA H100 80GB HBM3" };
	struct tk_case compat = ok_case, home = ok_case, bad_home = ok_case;

	run(&ok_case, &r);
	f = find_id(&r, "setup.cuda.toolkit");
	ok(count_id(&r, "setup.cuda.toolkit") == 1 && r.nr == 1,
	   "12.4 on 550.54.15: one ok finding, toolkits deduplicated");
	ok(says(f, "CUDA 12.4.1 toolkit (/usr/local/cuda-12.4)"),
	   "12.4: version.json read, real path");
	ok(says(f, "no driver update needed"), "12.4 on 550: says the driver is fine as it is");
	ok(says(f, "libcudart.so.12.4.127"), "12.4: the libcudart file in the evidence");
	ok(dr_worst(&r) == DR_OK, "12.4 on 550: nothing worse than ok");
	dump(&r);
	dr_report_release(&r);

	compat.nvml_driver = "535.104.05";
	compat.nvml_cuda = 12020;
	run(&compat, &r);
	f = find_id(&r, "setup.cuda.toolkit_minor_compat");
	ok(f && f->severity == DR_WARNING && !count_id(&r, "setup.cuda.toolkit"),
	   "12.4 on 535.104.05: minor-version compatibility warning");
	ok(says(f, "550.54.15") && says(f, "cuda-toolkit-12-2"),
	   "minor compat: names the 12.4.1 row's driver and the toolkit matching the driver");
	ok(says(f, "cudaErrorUnsupportedPtxVersion"), "minor compat: explains the PTX JIT limit");
	dump(&r);
	dr_report_release(&r);

	home.cuda_home = "/usr/local/cuda-12.4";
	run(&home, &r);
	ok(r.nr == 1 && count_id(&r, "setup.cuda.toolkit") == 1 &&
	           !count_id(&r, "setup.cuda.toolkit_home_missing"),
	   "CUDA_HOME naming the same toolkit: one finding, no home warning");
	dr_report_release(&r);

	bad_home.cuda_home = "/usr/local/cuda-11.8";
	run(&bad_home, &r);
	f = find_id(&r, "setup.cuda.toolkit_home_missing");
	ok(f && f->severity == DR_WARNING && says(f, "CUDA_HOME=/usr/local/cuda-11.8"),
	   "CUDA_HOME naming a missing toolkit: warning");
	dr_report_release(&r);
}

static void
test_real13(void)
{
	struct dr_report r = DR_REPORT_INIT;
	const struct dr_finding *f;
	/* this development machine: /usr/local/cuda -> cuda-13.0, nvcc on PATH, no driver */
	struct tk_case here = { "real13", "/root/.cargo/bin:/usr/local/cuda/bin:" SYS_PATH,
		                NULL,     NULL,
		                NULL,     0,
		                NULL,     NULL };
	struct tk_case old = here, fine = here, snap = here, consumer = here;

	run(&here, &r);
	f = find_id(&r, "setup.cuda.toolkit_no_driver");
	ok(f && f->severity == DR_INFO && r.nr == 1, "13.0, no driver: one info finding");
	ok(says(f, "CUDA 13.0 toolkit (/usr/local/cuda-13.0)"),
	   "13.0: version from cuda_runtime_api.h (no version.json), absolute link resolved");
	ok(says(f, "CUDART_VERSION 13000") && says(f, "libcudart.so.13"),
	   "13.0: evidence names the header and the libcudart file");
	ok(says(f, "580.65.06"), "no driver: names the driver 13.0 needs");
	ok(says(f, "cannot run on this machine"), "no driver: says nothing can run here");
	dump(&r);
	dr_report_release(&r);

	old.nvml_driver = "575.57.08";
	old.nvml_cuda = 12090;
	old.gpu = "NVIDIA A100-SXM4-80GB";
	run(&old, &r);
	f = find_id(&r, "setup.cuda.toolkit_too_new");
	ok(f && f->severity == DR_WARNING && !count_id(&r, "setup.cuda.toolkit_no_driver"),
	   "13.0 on 575: too new");
	ok(says(f, "580.65.06") && says(f, "CUDA 12.9") && says(f, "cuda-toolkit-12-9"),
	   "too new: names the minimum driver and the newest CUDA of the driver");
	ok(says(f, "cuda-compat-13-0"), "too new on a data-centre GPU: forward compatibility");
	ok(says(f, "another"), "too new: minor compat does not cover another major version");
	dump(&r);
	dr_report_release(&r);

	consumer = old;
	consumer.gpu = "NVIDIA GeForce RTX 4090";
	run(&consumer, &r);
	f = find_id(&r, "setup.cuda.toolkit_too_new");
	ok(f && !says(f, "cuda-compat"), "too new on GeForce: no forward compatibility offered");
	dr_report_release(&r);

	fine.nvml_driver = "590.48.01";
	fine.nvml_cuda = 13010;
	run(&fine, &r);
	ok(count_id(&r, "setup.cuda.toolkit") == 1 && !count_id(&r, "setup.cuda.toolkit_too_new"),
	   "13.0 on 590: ok");
	dr_report_release(&r);

	/* NVML failed, the snapshot has the driver */
	snap.snap_driver = "580.65.06";
	run(&snap, &r);
	f = find_id(&r, "setup.cuda.toolkit");
	ok(f && says(f, "driver 580.65.06 (CUDA 13.0)") && says(f, "the GPU snapshot"),
	   "driver from the snapshot when NVML did not answer");
	dr_report_release(&r);
}

static void
test_two(void)
{
	struct dr_report r = DR_REPORT_INIT;
	const struct dr_finding *f;
	struct tk_case mixed = { "two",        "/usr/local/cuda-11.8/bin:" SYS_PATH,
		                 NULL,         NULL,
		                 "570.124.06", 12080,
		                 NULL,         NULL };
	struct tk_case same = mixed;

	run(&mixed, &r);
	f = find_id(&r, "setup.cuda.toolkit_several");
	ok(f && f->severity == DR_INFO, "nvcc on PATH 11.8, /usr/local/cuda 12.8: info");
	ok(says(f, "CUDA 11.8.0 (/usr/local/cuda-11.8)") &&
	           says(f, "CUDA 12.8.1 (/usr/local/cuda-12.8)"),
	   "several: names both");
	is_int(count_id(&r, "setup.cuda.toolkit"), 2, "two toolkits on 570.124.06: both ok");
	dump(&r);
	dr_report_release(&r);

	same.path = "/usr/local/cuda/bin:" SYS_PATH;
	run(&same, &r);
	ok(!count_id(&r, "setup.cuda.toolkit_several") && count_id(&r, "setup.cuda.toolkit") == 2,
	   "nvcc on PATH is /usr/local/cuda's: no several, both listed");
	dr_report_release(&r);

	same.cuda_home = "/usr/local/cuda-11.8";
	run(&same, &r);
	f = find_id(&r, "setup.cuda.toolkit_several");
	ok(f && says(f, "CUDA_HOME is CUDA 11.8.0"), "nvcc on PATH 12.8, CUDA_HOME 11.8: several");
	dr_report_release(&r);

	same.path = SYS_PATH;
	run(&same, &r);
	f = find_id(&r, "setup.cuda.toolkit_several");
	ok(f && says(f, "CUDA_HOME is CUDA 11.8.0") && says(f, "/usr/local/cuda is CUDA 12.8.1"),
	   "no nvcc on PATH, CUDA_HOME 11.8, /usr/local/cuda 12.8: several");
	dr_report_release(&r);
	same.path = "/usr/local/cuda/bin:" SYS_PATH;
	same.cuda_home = NULL;

	/* NVML's CUDA version decides, as README.md's rule 1 says: 570.26 reports 12.8 */
	same.nvml_driver = "570.26";
	run(&same, &r);
	ok(count_id(&r, "setup.cuda.toolkit") == 2,
	   "12.8.1 and 11.8 on 570.26 (CUDA 12.8): both ok");
	dr_report_release(&r);

	same.nvml_driver = "560.35.05";
	same.nvml_cuda = 0; /* the driver's CUDA version from the table */
	run(&same, &r);
	ok(count_id(&r, "setup.cuda.toolkit_minor_compat") == 1 &&
	           count_id(&r, "setup.cuda.toolkit") == 1,
	   "12.8.1 on 560.35.05 (no NVML CUDA version): minor compat; 11.8 ok");
	dr_report_release(&r);
}

static void
test_old_and_debian(void)
{
	struct dr_report r = DR_REPORT_INIT;
	const struct dr_finding *f;
	struct tk_case old = { "old102", SYS_PATH, NULL, NULL, "418.39", 0, NULL, NULL };
	struct tk_case deb = { "debian", SYS_PATH, NULL, NULL, "525.60.13", 12000, NULL, NULL };

	run(&old, &r);
	f = find_id(&r, "setup.cuda.toolkit_too_new");
	ok(f && says(f, "CUDA 10.2.89 toolkit") && says(f, "none before CUDA 11"),
	   "10.2 (version.txt) on 418.39: too new, no minor compat before 11");
	ok(says(f, "440.33"), "10.2: names >= 440.33");
	ok(says(f, "needs driver >= 440.33 (no minor-version compatibility before CUDA 11)") &&
	           !says(f, "(minor-version compatibility)\""),
	   "10.2: the table line does not offer a minor-compat driver for 10.x");
	dump(&r);
	dr_report_release(&r);

	old.nvml_driver = "450.51.06";
	run(&old, &r);
	ok(count_id(&r, "setup.cuda.toolkit") == 1 && r.nr == 1, "10.2 on 450.51.06: ok");
	dr_report_release(&r);

	run(&deb, &r);
	f = find_id(&r, "setup.cuda.toolkit");
	ok(f && says(f, "CUDA 12.0 toolkit (/usr/lib/nvidia-cuda-toolkit)") &&
	           says(f, "libcudart.so.12.0.146"),
	   "Debian: /usr/bin/nvcc wrapper followed, version from libcudart.so.12.0.146");
	ok(says(f, "/usr/lib/nvidia-cuda-toolkit") && says(f, "a script that runs"),
	   "Debian: the prefix and the wrapper in the evidence");
	dump(&r);
	dr_report_release(&r);

	deb.nvml_driver = "520.61.05";
	deb.nvml_cuda = 11080;
	run(&deb, &r);
	ok(count_id(&r, "setup.cuda.toolkit_too_new") == 1, "Debian 12.0 on 520 (11.8): too new");
	dr_report_release(&r);
}

static void
test_misc(void)
{
	struct dr_report r = DR_REPORT_INIT;
	const struct dr_finding *f;
	struct tk_case none = { "none", SYS_PATH, NULL, NULL, "550.54.15", 12040, NULL, NULL };
	struct tk_case bare = { "none", SYS_PATH, NULL, NULL, NULL, 0, NULL, NULL };
	struct tk_case nover = {
		"noversion", SYS_PATH, NULL, NULL, "550.54.15", 12040, NULL, NULL
	};
	struct tk_case ld = { "ldpath",    SYS_PATH, NULL, "/opt/env/lib:/nonexistent",
		              "550.54.15", 12040,    NULL, NULL };

	run(&none, &r);
	f = find_id(&r, "setup.cuda.toolkit_none");
	ok(f && r.nr == 1 && f->severity == DR_INFO, "no toolkit, NVIDIA GPU: one info line");
	ok(says(f, "cuda-toolkit-12-4"), "no toolkit: suggests the driver's CUDA if one is wanted");
	dr_report_release(&r);

	run(&bare, &r);
	ok(r.nr == 0, "no toolkit, no NVIDIA GPU: nothing");
	dr_report_release(&r);

	run(&nover, &r);
	f = find_id(&r, "setup.cuda.toolkit_version_unknown");
	ok(f && r.nr == 1 && says(f, "/usr/local/cuda-12.6"), "nvcc without a version: info");
	dr_report_release(&r);

	run(&ld, &r);
	f = find_id(&r, "setup.cuda.toolkit_minor_compat");
	ok(f && says(f, "CUDA 12.8 runtime (/opt/env/lib)"),
	   "libcudart 12.8 on LD_LIBRARY_PATH, driver 12.4: minor compat");
	dump(&r);
	dr_report_release(&r);

	ld.nvml_driver = "570.124.06";
	ld.nvml_cuda = 12080;
	run(&ld, &r);
	ok(count_id(&r, "setup.cuda.toolkit") == 1 && r.nr == 1,
	   "libcudart 12.8 on LD_LIBRARY_PATH, driver 12.8: ok");
	dr_report_release(&r);
}

/*
 * R565 drivers report CUDA 12.7, a version that has no toolkit: what
 * doctor suggests installing must be 12.6, not cuda-toolkit-12-7.
 */
static void
test_r565(void)
{
	struct dr_report r = DR_REPORT_INIT;
	const struct dr_finding *f;
	struct tk_case ld = { "ldpath",    SYS_PATH, NULL, "/opt/env/lib",
		              "565.57.01", 12070,    NULL, NULL };
	struct tk_case none = { "none", SYS_PATH, NULL, NULL, "565.57.01", 12070, NULL, NULL };
	struct tk_case old = { "old102", SYS_PATH, NULL, NULL, "418.39", 10010, NULL, NULL };

	run(&ld, &r);
	f = find_id(&r, "setup.cuda.toolkit_minor_compat");
	ok(f && says(f, "CUDA 12.7") && says(f, "cuda-toolkit-12-6") &&
	           !says(f, "cuda-toolkit-12-7"),
	   "R565 (CUDA 12.7), 12.8 runtime: minor compat, suggests 12.6, no cuda-toolkit-12-7");
	dump(&r);
	dr_report_release(&r);

	run(&none, &r);
	f = find_id(&r, "setup.cuda.toolkit_none");
	ok(f && says(f, "cuda-toolkit-12-6") && says(f, "cuda-toolkit=12.6") && !says(f, "12-7") &&
	           !says(f, "=12.7"),
	   "R565, no toolkit: suggests CUDA 12.6, an existing toolkit");
	dr_report_release(&r);

	run(&old, &r);
	f = find_id(&r, "setup.cuda.toolkit_too_new");
	ok(f && says(f, "cuda-toolkit-10-1"), "10.2 on a CUDA 10.1 driver: suggests 10.1");
	dr_report_release(&r);

	ok(cuda_toolkit_for(12070) == 12060 && cuda_toolkit_for(12080) == 12080 &&
	           cuda_toolkit_for(99990) == 99990 && cuda_toolkit_for(0) == 0 &&
	           cuda_toolkit_for(9020) == 0,
	   "cuda_toolkit_for: 12.7 -> 12.6, 12.8 itself, beyond the table itself, none before 10");
}

static void
alarm_fail(int sig)
{
	(void)sig;
	printf("not ok - a read blocked (a FIFO was opened)\n");
	fflush(stdout);
	_exit(1);
}

/*
 * Files a toolkit's version is read from that are FIFOs (opening one for
 * reading blocks until a writer comes), malformed or cut short.
 */
static void
test_robust(void)
{
	char root[PATH_MAX], dir[PATH_MAX], p[PATH_MAX];
	struct dr_report r = DR_REPORT_INIT;
	const struct dr_finding *f;
	struct tk_case c = { NULL,         "/usr/local/cuda-12.8/bin:" SYS_PATH,
		             NULL,         NULL,
		             "570.124.06", 12080,
		             NULL,         NULL };

	tmp_path(root, sizeof(root), "fifo");
	join(dir, sizeof(dir), root, "usr/local/cuda-12.8/bin");
	make_dirs(dir);
	write_at(dir, "nvcc", "#!/bin/sh\n");
	join(dir, sizeof(dir), root, "usr/local/cuda-12.8/include");
	make_dirs(dir);
	write_at(dir, "cuda_runtime_api.h", "/* x */\n#define CUDART_VERSION 12080\n");
	join(p, sizeof(p), root, "usr/local/cuda-12.8/version.json");
	if (mkfifo(p, 0644))
		die_errno("mkfifo", p);
	join(p, sizeof(p), root, "usr/local/cuda-12.8/version.txt");
	if (mkfifo(p, 0644))
		die_errno("mkfifo", p);
	c.fixture = root;
	signal(SIGALRM, alarm_fail);
	alarm(20);
	run(&c, &r);
	alarm(0);
	f = find_id(&r, "setup.cuda.toolkit");
	ok(f && says(f, "CUDART_VERSION 12080"),
	   "version.json and version.txt FIFOs: not opened, version from the header");
	dump(&r);
	dr_report_release(&r);

	/* a "version" that is no string: the next quoted word is not taken */
	join(p, sizeof(p), root, "usr/local/cuda-12.8/version.json");
	unlink(p);
	write_str(p, "{ \"cuda\" : { \"version\" : 13, \"name\" : \"9.9.9\" } }");
	join(p, sizeof(p), root, "usr/local/cuda-12.8/version.txt");
	unlink(p);
	run(&c, &r);
	f = find_id(&r, "setup.cuda.toolkit");
	ok(f && says(f, "CUDART_VERSION 12080") && !says(f, "9.9.9"),
	   "version.json with a number for version: falls through to the header");
	dr_report_release(&r);

	/* cut short in the middle of the version string */
	join(p, sizeof(p), root, "usr/local/cuda-12.8/version.json");
	write_str(p,
	          "{\n   \"cuda\" : {\n      \"name\" : \"CUDA SDK\",\n      \"version\" : \"13.0");
	run(&c, &r);
	f = find_id(&r, "setup.cuda.toolkit");
	ok(f && says(f, "CUDART_VERSION 12080"), "version.json cut short: not taken");
	dr_report_release(&r);

	/* the real layout, spaces and all */
	write_str(p, "{\n   \"cuda\" : {\n      \"name\" : \"CUDA SDK\",\n      \"version\" : "
	             "\"12.8.1\"\n   },\n   \"cuda_cudart\" : {\n      \"version\" : "
	             "\"12.8.90\"\n   }\n}\n");
	run(&c, &r);
	f = find_id(&r, "setup.cuda.toolkit");
	ok(f && says(f, "CUDA 12.8.1 toolkit"), "version.json as NVIDIA writes it: 12.8.1");
	dr_report_release(&r);

	/* strict JSON: a duplicate "version", NaN, a trailing comma are not taken */
	write_str(p, "{\"cuda\": {\"version\": \"9.9.9\", \"version\": \"12.8.1\"}}");
	run(&c, &r);
	f = find_id(&r, "setup.cuda.toolkit");
	ok(f && says(f, "CUDART_VERSION 12080") && !says(f, "9.9.9") && !says(f, "12.8.1"),
	   "version.json with a duplicate key: refused, version from the header");
	dr_report_release(&r);
	write_str(p, "{\"cuda\": {\"version\": \"12.8.1\", \"size\": NaN}}");
	run(&c, &r);
	f = find_id(&r, "setup.cuda.toolkit");
	ok(f && says(f, "CUDART_VERSION 12080"), "version.json with NaN: refused");
	dr_report_release(&r);
	/* "version" in another object, "cuda" not an object */
	write_str(p, "{\"cuda_cudart\": {\"version\": \"12.8.90\"}, \"cuda\": \"12.8\"}");
	run(&c, &r);
	f = find_id(&r, "setup.cuda.toolkit");
	ok(f && says(f, "CUDART_VERSION 12080") && !says(f, "12.8.90"),
	   "version.json: only the \"cuda\" object's version counts");
	dr_report_release(&r);

	/* version.txt with garbage, a directory named version.json */
	unlink(p);
	make_dirs(p);
	join(p, sizeof(p), root, "usr/local/cuda-12.8/version.txt");
	write_str(p, "\x01\x02garbage\n");
	join(p, sizeof(p), root, "usr/local/cuda-12.8/include/cuda_runtime_api.h");
	write_str(p, "#define CUDART_VERSION\n");
	run(&c, &r);
	f = find_id(&r, "setup.cuda.toolkit_version_unknown");
	ok(f && r.nr == 1, "garbage everywhere: version unknown, nothing made up");
	dr_report_release(&r);

	/* the same with a malformed version.json: the evidence says what is wrong, one line */
	join(p, sizeof(p), root, "usr/local/cuda-12.8/version.json");
	rmdir(p);
	write_str(p, "{\n  \"cuda\": {\n    \"version\": \"12.8.1\",\n  }\n}\n");
	run(&c, &r);
	f = find_id(&r, "setup.cuda.toolkit_version_unknown");
	ok(f && says(f, "version.json: malformed JSON at line 4, column 3: string or '}' expected"),
	   "malformed version.json: line, column and jansson's words in the evidence");
	dump(&r);
	dr_report_release(&r);
	write_str(p, "[\"12.8.1\"]");
	run(&c, &r);
	f = find_id(&r, "setup.cuda.toolkit_version_unknown");
	ok(f && says(f, "version.json: not a JSON object (an array)"),
	   "version.json holding an array: said so");
	dr_report_release(&r);
	rm_tree(root);
}

static void
test_catalog(void)
{
	bool sorted = true;
	size_t n = 0;

	for (; dr_catalog_toolkit[n].id; n++) {
		if (n && strcmp(dr_catalog_toolkit[n - 1].id, dr_catalog_toolkit[n].id) >= 0)
			sorted = false;
		if (strncmp(dr_catalog_toolkit[n].id, "setup.cuda.toolkit", 18))
			sorted = false;
	}
	ok(n == 8 && sorted, "catalog: 8 setup.cuda.toolkit* entries in id order");
	ok(catalog_ok, "every id emitted has an explanation");
}

int
main(void)
{
	find_fixtures();
	test_cuda124();
	test_real13();
	test_two();
	test_old_and_debian();
	test_misc();
	make_tmp_dir("t_doctor_toolkit");
	test_r565();
	test_robust();
	rm_tree(tmp_dir);
	test_catalog();
	return done_testing();
}
