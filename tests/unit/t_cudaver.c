/*
 * Tests of the CUDA release table (data/cuda/drivers.tsv built in) and its
 * arithmetic: version comparison, the rows, the newest CUDA of a driver,
 * and whether a driver runs a toolkit's programs, on cases worked by hand
 * from data/cuda/README.md.
 */
#include "doctor/cudaver.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

static void
test_ver_cmp(void)
{
	ok(ver_cmp("570.124.06", "570.26") > 0, "ver_cmp: 570.124.06 > 570.26 (numeric fields)");
	ok(ver_cmp("570.26", "570.124.06") < 0, "ver_cmp: 570.26 < 570.124.06");
	ok(ver_cmp("12.4", "12.4.0") == 0, "ver_cmp: 12.4 == 12.4.0");
	ok(ver_cmp("12.4.1", "12.4") > 0, "ver_cmp: 12.4.1 > 12.4");
	ok(ver_cmp("580", "580.0") == 0, "ver_cmp: 580 == 580.0");
	ok(ver_cmp("450.51.06", "450.80.02") < 0, "ver_cmp: 450.51.06 < 450.80.02");
	ok(ver_cmp("535.104.05", "535.104.05") == 0, "ver_cmp: equal");
	ok(ver_cmp("10.2.89", "9.2.148") > 0, "ver_cmp: 10 > 9 (not text order)");
}

static void
test_table(void)
{
	const struct cuda_release *t;
	size_t n = cuda_releases(&t), unknown = 0;
	bool sorted = true, nvml_ok = true;

	is_int(n, 61, "table: 61 rows");
	if (n < 61)
		return;
	is_str(t[0].cuda, "10.0.130", "table: first row 10.0.130");
	is_str(t[n - 1].cuda, "13.5", "table: last row 13.5");
	is_int(t[n - 1].major, 13, "table: 13.5 major");
	is_int(t[n - 1].minor, 5, "table: 13.5 minor");
	for (size_t i = 0; i < n; i++) {
		unknown += !t[i].min_driver[0];
		if (i && ver_cmp(t[i - 1].cuda, t[i].cuda) >= 0)
			sorted = false;
		if (t[i].nvml != t[i].major * 1000 + t[i].minor * 10)
			nvml_ok = false;
		if (!t[i].compat_driver[0])
			unknown += 100;
	}
	ok(sorted, "table: oldest first");
	ok(nvml_ok, "table: nvml column is 1000*major + 10*minor on every row");
	is_int(unknown, 4,
	       "table: four '?' driver cells (12.3.2, 13.4.1, 13.4.2, 13.5), no '?' compat");
	ok(!strchr(t[0].min_driver, '>') && !strchr(t[0].min_driver, '?'),
	   "table: '>=' taken off the cells");
}

static void
test_find(void)
{
	const struct cuda_release *r;

	r = cuda_release_find(12, 4);
	ok(r && !strcmp(r->cuda, "12.4.0") && !strcmp(r->min_driver, "550.54.14"),
	   "find 12.4: the GA row, >= 550.54.14");
	ok(r && !strcmp(r->compat_driver, "525.60.13"), "find 12.4: minor compat >= 525.60.13");
	r = cuda_release_find(11, 0);
	ok(r && !strcmp(r->cuda, "11.0.2") && !strcmp(r->min_driver, "450.51.05"),
	   "find 11.0: 11.0.2, >= 450.51.05");
	r = cuda_release_find(13, 0);
	ok(r && !strcmp(r->compat_driver, "580"), "find 13.0: minor compat >= 580");
	r = cuda_release_find(12, 3);
	ok(r && !strcmp(r->min_driver, "545.23.06"), "find 12.3: the GA row, not 12.3.2's '?'");
	r = cuda_release_find(13, 4);
	ok(r && !r->min_driver[0], "find 13.4: minimum driver unknown ('?' is empty)");
	ok(!cuda_release_find(12, 7), "find 12.7: there is no CUDA 12.7");
	ok(!cuda_release_find(9, 2), "find 9.2: older than the table");
}

static void
test_for_driver(void)
{
	is_int(cuda_for_driver("535.104.05"), 12020, "driver 535.104.05: CUDA 12.2");
	is_int(cuda_for_driver("525.60.13"), 12000, "driver 525.60.13: CUDA 12.0");
	is_int(cuda_for_driver("580.65.06"), 13000, "driver 580.65.06: CUDA 13.0");
	is_int(cuda_for_driver("450.51.05"), 11000, "driver 450.51.05: CUDA 11.0");
	is_int(cuda_for_driver("390.157"), 0, "driver 390: older than every row");
	is_int(cuda_for_driver("390"), 0, "driver 390 (one field): 0");
	is_int(cuda_for_driver("570.124.06"), 12080, "driver 570.124.06: CUDA 12.8");
	is_int(cuda_for_driver("575.57.08"), 12090, "driver 575.57.08: CUDA 12.9");
	is_int(cuda_for_driver("590.48.01"), 13010, "driver 590.48.01: CUDA 13.1");
	is_int(cuda_for_driver("565.57.01"), 12060, "driver 565.57.01 (R565): CUDA 12.6");
	is_int(cuda_for_driver("620.10"), 13030, "driver 620: 13.3 (13.4's minimum is unknown)");
	is_int(cuda_for_driver(""), 0, "driver '': 0");
	is_int(cuda_for_driver(NULL), 0, "driver NULL: 0");
	is_int(cuda_for_driver("unknown"), 0, "driver 'unknown': 0");
}

static void
test_support(void)
{
	char buf[16];

	/* the driver's CUDA version from its version */
	is_int(cuda_support(0, "535.104.05", 12, 4), CUDA_MINOR_COMPAT,
	       "12.4 on 535.104.05: minor-version compatibility");
	is_int(cuda_support(0, "575.57.08", 13, 0), CUDA_TOO_NEW,
	       "13.0 on 575: too new (13.x needs R580)");
	is_int(cuda_support(0, "590.48.01", 12, 9), CUDA_FULL, "12.9 on 590: full");
	is_int(cuda_support(0, "550.54.15", 12, 4), CUDA_FULL, "12.4 on 550.54.15: full");
	is_int(cuda_support(0, "545.23.06", 11, 8), CUDA_FULL, "11.8 on a 12.x driver: full");
	is_int(cuda_support(0, "450.51.06", 11, 0), CUDA_FULL, "11.0 on 450.51.06: full");
	is_int(cuda_support(0, "450.51.06", 11, 2), CUDA_TOO_NEW,
	       "11.2 on 450.51.06: too new (minor compat needs 450.80.02)");
	is_int(cuda_support(0, "450.80.02", 11, 2), CUDA_MINOR_COMPAT,
	       "11.2 on 450.80.02: minor compat");
	is_int(cuda_support(0, "470.82.01", 11, 8), CUDA_MINOR_COMPAT,
	       "11.8 on R470: minor compat");
	is_int(cuda_support(0, "520.61.05", 12, 0), CUDA_TOO_NEW,
	       "12.0 on 520 (CUDA 11.8): too new, another major version");
	is_int(cuda_support(0, "418.39", 10, 2), CUDA_TOO_NEW,
	       "10.2 on 418: too new (no compat in 10.x)");
	is_int(cuda_support(0, "440.33", 10, 2), CUDA_FULL, "10.2 on 440.33: full");
	is_int(cuda_support(0, "580.65.06", 13, 2), CUDA_MINOR_COMPAT, "13.2 on 580: minor compat");
	is_int(cuda_support(0, "390.157", 12, 4), CUDA_TOO_NEW, "12.4 on 390: too new");
	is_int(cuda_support(0, "390.157", 10, 0), CUDA_TOO_NEW, "10.0 on 390: too new");
	/* the driver's CUDA version from NVML */
	is_int(cuda_support(12020, "535.104.05", 12, 2), CUDA_FULL,
	       "NVML 12.2, toolkit 12.2: full");
	is_int(cuda_support(12020, NULL, 12, 4), CUDA_MINOR_COMPAT,
	       "NVML 12.2, no driver version, 12.4: minor compat (family floor)");
	is_int(cuda_support(11000, NULL, 11, 2), CUDA_UNKNOWN,
	       "NVML 11.0, no driver version, 11.2: unknown (450.51 or 450.80?)");
	is_int(cuda_support(13010, "", 13, 0), CUDA_FULL, "NVML 13.1, 13.0: full");
	is_int(cuda_support(12090, "", 13, 0), CUDA_TOO_NEW, "NVML 12.9, 13.0: too new");
	is_int(cuda_support(0, NULL, 12, 4), CUDA_UNKNOWN, "nothing known: unknown");
	is_int(cuda_support(0, "", 12, 4), CUDA_UNKNOWN, "empty driver: unknown");

	is_str(cuda_ver_str(12040, buf, sizeof(buf)), "12.4", "cuda_ver_str 12040");
	is_str(cuda_ver_str(13000, buf, sizeof(buf)), "13.0", "cuda_ver_str 13000");
	is_str(cuda_ver_str(11080, buf, sizeof(buf)), "11.8", "cuda_ver_str 11080");
}

int
main(void)
{
	test_ver_cmp();
	test_table();
	test_find();
	test_for_driver();
	test_support();
	return done_testing();
}
