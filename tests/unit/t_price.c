/*
 * Tests of fit's price table (src/fit/price.c): the built-in table parses
 * and every offer names one spec row, a source and a date; a user's file is
 * read with the same rules and refused with one line naming the file, line
 * and column when malformed (files built in a temporary directory, FIFOs,
 * directories, symlink loops and oversized files among them); the
 * arithmetic of prices per hour, per million tokens and per run; the age.
 */
#include "fit/price.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/err.h"
#include "core/specs.h"
#include "harness.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define DAY           86400

static char tmp[] = "/tmp/t_price.XXXXXX";

static const struct gpu_spec *
row(const char *name)
{
	return gpu_spec_find(name, NULL, 0, &(size_t){ 0 });
}

/* Write text to tmp/name; its path. */
static const char *
put(const char *name, const char *text, size_t len)
{
	static char path[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmp, name);
	f = fopen(path, "wb");
	if (!f || fwrite(text, 1, len, f) != len || fclose(f)) {
		diag("cannot write %s: %s", path, strerror(errno));
		exit(1);
	}
	return path;
}

static const char *
puts_file(const char *name, const char *text)
{
	return put(name, text, strlen(text));
}

/* Load path; the status, with the message in msg. */
static int
load(const char *path, struct price_table *t, char *msg, size_t size)
{
	struct err e = ERR_INIT;
	int rc = price_load_file(t, path, &e);

	snprintf(msg, size, "%s", e.msg);
	return rc;
}

static void
test_dates(void)
{
	is_int(price_parse_date("1970-01-01"), 0, "1970-01-01 is day 0");
	is_int(price_parse_date("1970-03-01"), 59, "1970-03-01 is day 59");
	is_int(price_parse_date("2000-03-01"), 11017, "2000-03-01 (a leap year by 400)");
	is_int(price_parse_date("2026-12-02"), 20789, "2026-12-02");
	is_int(price_parse_date("2024-02-29"), 19782, "2024-02-29 exists");
	is_int(price_parse_date("2023-02-29"), -1, "2023-02-29 does not");
	is_int(price_parse_date("2100-02-29"), -1, "2100-02-29 does not (by 100)");
	is_int(price_parse_date("2026-13-01"), -1, "month 13");
	is_int(price_parse_date("2026-04-31"), -1, "April 31");
	is_int(price_parse_date("2026-00-10"), -1, "month 0");
	is_int(price_parse_date("2026-1-01"), -1, "one-digit month");
	is_int(price_parse_date("1969-12-31"), -1, "before 1970");
	is_int(price_parse_date("2026-12-02x"), -1, "trailing text");
	is_int(price_parse_date("2026/12/02"), -1, "slashes");
	is_int(price_parse_date(""), -1, "empty");
	is_int(price_parse_date(NULL), -1, "NULL");
	/* against the C library's own count of days */
	{
		struct tm tm = { .tm_year = 2026 - 1900, .tm_mon = 10, .tm_mday = 9 };

		is_int(price_parse_date("2026-11-09"), (long)(timegm(&tm) / DAY),
		       "2026-11-09 as timegm() counts it");
	}
}

static void
test_builtin(void)
{
	struct price_table t;
	struct err e = ERR_INIT;
	bool all = true, sane = true, dated = true;
	long compiled = price_parse_date("2026-12-02");
	size_t on_demand = 0;
	const char *want[] = { "H100 SXM5 80GB",
		               "H100 PCIe 80GB",
		               "H200 SXM 141GB",
		               "A100 SXM4 40GB",
		               "A100 SXM4 80GB",
		               "L40S",
		               "L4",
		               "A10",
		               "RTX 4090",
		               "RTX 3090",
		               "RTX A6000",
		               "B200",
		               "MI300X" };

	if (!ok(price_load_builtin(&t, &e) == 0, "built-in table parses (%s)", e.msg))
		return;
	ok(t.builtin, "built-in: marked built-in");
	ok(t.nr >= 40, "built-in: %zu offers", t.nr);
	for (size_t i = 0; i < t.nr; i++) {
		const struct price_offer *o = &t.offer[i];

		if (!o->gpu || !*o->provider || strncmp(o->source, "https://", 8))
			all = false;
		if (!(o->usd_per_gpu_hour >= 0.05 && o->usd_per_gpu_hour <= 20) ||
		    (o->gpus != 1 && o->gpus != 8)) {
			sane = false;
			diag("line %u: %g USD, %u GPUs", o->line, o->usd_per_gpu_hour, o->gpus);
		}
		if (o->date < price_parse_date("2026-01-01") || o->date > compiled)
			dated = false;
		on_demand += o->kind == PRICE_ON_DEMAND;
	}
	ok(all, "built-in: every offer has a spec row, a provider and an https source");
	ok(sane, "built-in: 0.05 to 20 USD per GPU-hour, instances of 1 or 8 GPUs");
	ok(dated, "built-in: every date in 2026, none after the table was compiled");
	ok(on_demand * 10 >= t.nr * 8, "built-in: mostly on-demand (%zu of %zu)", on_demand, t.nr);
	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		ok(price_cheapest(&t, row(want[i]), 1, price_default_kinds(&t)) != NULL,
		   "built-in: an on-demand price for %s", want[i]);
	is_int(price_default_kinds(&t), PRICE_ON_DEMAND, "built-in: ranks on-demand");
	ok(t.newest >= t.oldest && t.newest <= compiled, "built-in: newest %s", price_newest_s(&t));
	ok(!price_is_old(&t, (time_t)compiled * DAY), "built-in: not old on the day compiled");
	ok(price_is_old(&t, (time_t)(t.newest + PRICE_OLD_DAYS + 1) * DAY),
	   "built-in: old %d days after its newest price", PRICE_OLD_DAYS + 1);
	/* the H100 SXM5 is rented by the GPU and by 8: the 8-GPU offers are dearer for one */
	{
		const struct gpu_spec *h = row("H100 SXM5 80GB");
		const struct price_offer *o1 = price_cheapest(&t, h, 1, PRICE_ON_DEMAND);
		const struct price_offer *o8 = price_cheapest(&t, h, 8, PRICE_ON_DEMAND);

		ok(o1 && o1->gpus == 1, "built-in: one H100 from an offer of single GPUs");
		ok(o8 && price_per_hour(o8, 8) <= 8 * o1->usd_per_gpu_hour,
		   "built-in: 8 H100s no dearer than 8 single ones");
	}
	price_free(&t);
	ok(t.nr == 0 && !t.offer, "price_free empties the table");
	price_free(&t);
	price_free(NULL);
	ok(1, "price_free twice and of NULL");
}

static const char header[] = "gpu\tusd_per_gpu_hour\tgpus\tprovider\tkind\tdate\tsource\tnotes\n";

static void
test_user_file(void)
{
	struct price_table t;
	char msg[300];
	const char *p;
	const struct price_offer *o;
	time_t now = (time_t)price_parse_date("2026-12-02") * DAY;

	/* a user's contract: the GPU and its price are enough */
	p = puts_file("mine.tsv", "# my contract\n"
	                          "gpu\tusd_per_gpu_hour\n"
	                          "h100 sxm\t1.85\n"
	                          "rtx 4090\t0.30\n"
	                          "\n");
	if (ok(load(p, &t, msg, sizeof(msg)) == 0, "minimal user file loads (%s)", msg)) {
		is_int(t.nr, 2, "minimal: two offers");
		ok(!t.builtin, "minimal: a user's file");
		is_str(t.origin, p, "minimal: origin is the path");
		ok(t.offer[0].gpu == row("H100 SXM5 80GB"), "minimal: 'h100 sxm' by gpu_spec_find");
		is_int(t.offer[0].kind, PRICE_ON_DEMAND, "minimal: kind on-demand unless said");
		is_int(t.offer[0].gpus, 1, "minimal: 1 GPU per instance unless said");
		is_int(t.offer[0].date, -1, "minimal: no date");
		is_str(t.offer[0].source, "", "minimal: no source");
		ok(isnan(price_age_days(&t, now)) && !price_is_old(&t, now),
		   "minimal: no date, no age, never old");
		is_str(price_newest_s(&t), "", "minimal: no newest date");
		is_int(price_default_kinds(&t), PRICE_ANY, "user file: every kind ranks");
		is_int(t.offer[1].line, 4, "minimal: the line of the second offer");
		price_free(&t);
	}

	/* every column, CRLF line ends and a byte order mark, as editors on Windows write */
	p = puts_file("full.tsv",
	              "\xef\xbb\xbfgpu\tusd_per_gpu_hour\tgpus\tprovider\tkind\tdate\tsource"
	              "\tnotes\tmy column\r\n"
	              "H100 SXM5 80GB\t2.00\t8\tAcme\treserved\t2026-06-01\thttps://a.example"
	              "\t1 year\tx\r\n"
	              "H100 SXM5 80GB\t2.50\t1\tAcme\ton-demand\t2026-07-01\t\t\t\r\n"
	              "H100 SXM5 80GB\t1.20\t1\tAcme\tspot\t2026-05-01\t?\t?\r\n"
	              "H100 SXM5 80GB\t2.50\t1\tOther\ton-demand\t2026-08-01\t\t\t\r\n");
	if (ok(load(p, &t, msg, sizeof(msg)) == 0, "full user file loads (%s)", msg)) {
		const struct gpu_spec *h = row("H100 SXM5 80GB");

		is_int(t.nr, 4, "full: four offers");
		is_str(t.offer[0].provider, "Acme", "full: provider");
		is_int(t.offer[0].gpus, 8, "full: 8 GPUs per instance");
		is_str(t.offer[0].notes, "1 year", "full: notes");
		is_str(price_kind_name(t.offer[0].kind), "reserved", "full: reserved");
		is_str(price_kind_name(t.offer[2].kind), "spot", "full: spot");
		is_str(t.offer[0].date_s, "2026-06-01", "full: the date as written, CR gone");
		is_str(price_newest_s(&t), "2026-08-01", "full: newest date");
		is_dbl(price_age_days(&t, now), 123, 1e-9, "full: 123 days old on 2026-12-02");
		ok(!price_is_old(&t, now), "full: 123 days is not old");
		ok(price_is_old(&t, now + 60 * DAY), "full: 183 days is old");

		o = price_cheapest(&t, h, 1, PRICE_ON_DEMAND);
		ok(o && o->usd_per_gpu_hour == 2.5 && !strcmp(o->provider, "Other"),
		   "cheapest on-demand: a tie goes to the newer offer");
		o = price_cheapest(&t, h, 1, PRICE_ANY);
		ok(o && o->kind == PRICE_SPOT, "cheapest of any kind: spot");
		o = price_cheapest(&t, h, 1, PRICE_RESERVED | PRICE_ON_DEMAND);
		ok(o && o->usd_per_gpu_hour == 2.5,
		   "one GPU: a reserved 8-GPU instance costs 16/h");
		o = price_cheapest(&t, h, 8, PRICE_RESERVED | PRICE_ON_DEMAND);
		ok(o && o->kind == PRICE_RESERVED, "eight GPUs: the reserved instance (16 < 20)");
		ok(!price_cheapest(&t, row("RTX 4090"), 1, PRICE_ANY),
		   "no offer for the 4090: NULL");
		ok(!price_cheapest(&t, h, 0, PRICE_ANY) && !price_cheapest(&t, h, NAN, PRICE_ANY) &&
		           !price_cheapest(&t, NULL, 1, PRICE_ANY) &&
		           !price_cheapest(NULL, h, 1, PRICE_ANY),
		   "cheapest: k 0, NAN, no GPU, no table: NULL");
		ok(!price_cheapest(&t, h, 1, 0), "cheapest: no kind asked: NULL");

		/* whole instances */
		is_dbl(price_per_hour(&t.offer[0], 1), 16, 1e-12, "8-GPU instance: 1 GPU pays 8");
		is_dbl(price_per_hour(&t.offer[0], 8), 16, 1e-12, "8-GPU instance: 8 GPUs, 16/h");
		is_dbl(price_per_hour(&t.offer[0], 9), 32, 1e-12, "8-GPU instance: 9 GPUs pay 16");
		is_dbl(price_per_hour(&t.offer[1], 3), 7.5, 1e-12, "single GPUs: 3 x 2.50");
		ok(isnan(price_per_hour(&t.offer[1], 0)) &&
		           isnan(price_per_hour(&t.offer[1], -2)) &&
		           isnan(price_per_hour(&t.offer[1], NAN)) &&
		           isnan(price_per_hour(&t.offer[1], INFINITY)) &&
		           isnan(price_per_hour(NULL, 1)),
		   "per hour: k 0, negative, NAN, inf, no offer: NAN");
		is_dbl(price_offer_age_days(&t.offer[1], now), 154, 1e-9, "offer age: 154 days");
		price_free(&t);
	}
}

static void
test_arithmetic(void)
{
	/* 2 USD/h at 1000 tokens/s: 3.6 M tokens an hour */
	is_dbl(price_per_mtok(2, 1000), 2.0 / 3.6, 1e-12, "2 USD/h at 1000 tok/s: 0.556 USD/Mtok");
	is_dbl(price_per_mtok(55.04, 20000), 55.04 / 72, 1e-12, "8x H100 at 20000 tok/s");
	ok(isnan(price_per_mtok(2, 0)) && isnan(price_per_mtok(0, 10)) &&
	           isnan(price_per_mtok(-1, 10)) && isnan(price_per_mtok(2, NAN)) &&
	           isnan(price_per_mtok(INFINITY, 10)),
	   "per Mtok: zero, negative, NAN or inf: NAN");
	/* a fine-tuning run of 1e9 tokens at 10000 tokens/s: 27.8 hours */
	is_dbl(price_run_hours(1e9, 10000), 1e5 / 3600, 1e-9, "1e9 tokens at 10k tok/s: 27.8 h");
	is_dbl(price_per_run(2, 1e9, 10000), 2 * 1e5 / 3600, 1e-9, "that run at 2 USD/h: 55.6 USD");
	ok(isnan(price_per_run(2, 0, 10)) && isnan(price_per_run(2, 1e9, 0)) &&
	           isnan(price_per_run(0, 1e9, 10)) && isnan(price_run_hours(-5, 10)),
	   "per run: zero or negative: NAN");
	is_str(price_kind_name(PRICE_ON_DEMAND), "on-demand", "kind name on-demand");
	is_str(price_kind_name((enum price_kind)99), "", "kind name of nothing: empty");
}

/* path must be refused with E_PARSE (or code) and a message with every piece of want. */
static void
refused(const char *what, const char *path, int code, const char *want1, const char *want2)
{
	struct price_table t;
	char msg[300];
	int rc = load(path, &t, msg, sizeof(msg));

	if (!ok(rc == code, "%s: refused (status %d): %s", what, rc, msg))
		return;
	ok(strstr(msg, path) && (!want1 || strstr(msg, want1)) && (!want2 || strstr(msg, want2)) &&
	           !strchr(msg, '\n'),
	   "%s: one line naming the file%s%s%s%s", what, want1 ? ", " : "", want1 ? want1 : "",
	   want2 ? ", " : "", want2 ? want2 : "");
	ok(t.nr == 0 && !t.offer, "%s: nothing kept", what);
}

static void
test_malformed(void)
{
	char buf[600], path[600];
	const char *row1 = "H100 SXM5 80GB\t2.49\t1\tAcme\ton-demand\t2026-11-01\thttps://x\t\n";
	struct {
		const char *name, *body, *want1, *want2;
	} cases[] = {
		{ "price-text", "H100 SXM5 80GB\tabc\t1\tA\ton-demand\t2026-11-01\t\t\n",
		  "line 2, column 2 (usd_per_gpu_hour)", "\"abc\" is not a price" },
		{ "price-zero", "H100 SXM5 80GB\t0\t1\tA\ton-demand\t2026-11-01\t\t\n",
		  "line 2, column 2", "not a price" },
		{ "price-negative", "H100 SXM5 80GB\t-2\t1\tA\ton-demand\t2026-11-01\t\t\n",
		  "column 2", "\"-2\"" },
		{ "price-exponent", "H100 SXM5 80GB\t1e3\t1\tA\ton-demand\t2026-11-01\t\t\n",
		  "column 2", "\"1e3\"" },
		{ "price-huge", "H100 SXM5 80GB\t1500\t1\tA\ton-demand\t2026-11-01\t\t\n",
		  "column 2", "at most 1000" },
		{ "price-comma", "H100 SXM5 80GB\t2,49\t1\tA\ton-demand\t2026-11-01\t\t\n",
		  "column 2", "\"2,49\"" },
		{ "price-missing", "H100 SXM5 80GB\t\t1\tA\ton-demand\t2026-11-01\t\t\n",
		  "column 2", "no price" },
		{ "gpu-unknown", "H999 SXM\t2.00\t1\tA\ton-demand\t2026-11-01\t\t\n",
		  "line 2, column 1 (gpu)", "\"H999 SXM\"" },
		{ "gpu-ambiguous", "H100\t2.00\t1\tA\ton-demand\t2026-11-01\t\t\n", "not one GPU",
		  "H100 PCIe 80GB" },
		{ "gpu-empty", "\t2.00\t1\tA\ton-demand\t2026-11-01\t\t\n", "column 1 (gpu)",
		  "no GPU named" },
		{ "kind", "H100 SXM5 80GB\t2.00\t1\tA\thourly\t2026-11-01\t\t\n",
		  "line 2, column 5 (kind)", "\"hourly\" is not on-demand, spot or reserved" },
		{ "date", "H100 SXM5 80GB\t2.00\t1\tA\ton-demand\t2026-02-30\t\t\n",
		  "line 2, column 6 (date)", "\"2026-02-30\"" },
		{ "date-format", "H100 SXM5 80GB\t2.00\t1\tA\ton-demand\t11/01/2026\t\t\n",
		  "column 6", "YYYY-MM-DD" },
		{ "gpus-zero", "H100 SXM5 80GB\t2.00\t0\tA\ton-demand\t2026-11-01\t\t\n",
		  "line 2, column 3 (gpus)", "\"0\"" },
		{ "gpus-text", "H100 SXM5 80GB\t2.00\teight\tA\ton-demand\t2026-11-01\t\t\n",
		  "column 3", "\"eight\"" },
		{ "gpus-many", "H100 SXM5 80GB\t2.00\t1000\tA\ton-demand\t2026-11-01\t\t\n",
		  "column 3", "1 to 72" },
		{ "cells", "H100 SXM5 80GB\t2.00\t1\tA\ton-demand\t2026-11-01\t\t\textra\n",
		  "line 2", "9 cells, more than the header's 8" },
	};
	struct price_table t;
	struct err e = ERR_INIT;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char name[64];

		snprintf(buf, sizeof(buf), "%s%s", header, cases[i].body);
		snprintf(name, sizeof(name), "%s.tsv", cases[i].name);
		refused(cases[i].name, puts_file(name, buf), E_PARSE, cases[i].want1,
		        cases[i].want2);
	}
	/* a bad row after good ones names its own line */
	snprintf(buf, sizeof(buf),
	         "# c\n%s%s\n%sH100 SXM5 80GB\tx\t1\tA\ton-demand\t2026-11-01\t\t\n", header, row1,
	         row1);
	refused("bad fifth line", puts_file("late.tsv", buf), E_PARSE, "line 6, column 2", NULL);

	refused("no header column", puts_file("nocol.tsv", "gpu\tprice\nH100 SXM5 80GB\t2\n"),
	        E_PARSE, "line 1", "no \"usd_per_gpu_hour\" column");
	refused("two price columns",
	        puts_file("dup.tsv", "gpu\tusd_per_gpu_hour\tusd_per_gpu_hour\nL4\t1\t2\n"),
	        E_PARSE, "line 1, column 3", "a second \"usd_per_gpu_hour\"");
	refused("empty file", puts_file("empty.tsv", ""), E_PARSE, "no price in it", "no header");
	refused("comments only", puts_file("comments.tsv", "# a\n\n# b\n"), E_PARSE, "no price",
	        NULL);
	refused("header only", puts_file("header.tsv", header), E_PARSE, "a header and no rows",
	        NULL);
	refused("NUL byte", put("nul.tsv", "gpu\tusd_per_gpu_hour\nL4\t1\0\n", 27), E_PARSE,
	        "a NUL byte", NULL);
	{
		char many[400] = "gpu\tusd_per_gpu_hour";

		for (int i = 0; i < 40; i++)
			strcat(many, "\tx");
		strcat(many, "\n");
		refused("40 columns", puts_file("wide.tsv", many), E_PARSE, "line 1",
		        "more than 32 tab-separated cells");
	}

	/* not a regular file, or too large: refused before reading, without waiting */
	snprintf(path, sizeof(path), "%s/fifo", tmp);
	if (mkfifo(path, 0600) == 0)
		refused("a FIFO", path, E_USAGE, "not a regular file (a FIFO)", NULL);
	else
		skip("mkfifo failed");
	refused("a directory", tmp, E_USAGE, "not a regular file (a directory)", NULL);
	snprintf(path, sizeof(path), "%s/loop", tmp);
	if (symlink(path, path) == 0)
		refused("a symlink loop", path, E_IO, "a loop of symbolic links", NULL);
	else
		skip("symlink failed");
	refused("/dev/zero", "/dev/zero", E_USAGE, "not a regular file (a device)", NULL);
	snprintf(path, sizeof(path), "%s/huge.tsv", tmp);
	{
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (fd >= 0 && ftruncate(fd, (off_t)PRICE_FILE_MAX + 1) == 0 && close(fd) == 0)
			refused("a file over 1 MiB", path, E_USAGE,
			        "more than a prices file may have", NULL);
		else
			skip("ftruncate failed");
	}
	snprintf(path, sizeof(path), "%s/none.tsv", tmp);
	refused("no such file", path, E_NOTFOUND, "no such file", NULL);
	ok(price_load_file(&t, "", &e) == E_USAGE, "empty path: a usage error");
	ok(price_load_file(&t, NULL, NULL) == E_USAGE, "NULL path, no err: a usage error");

	/* text parsed directly, with no origin to name */
	ok(price_parse(&t, "gpu\tusd_per_gpu_hour\nL4\t0.8\n", 28, NULL, &e) == 0 && t.nr == 1,
	   "price_parse of text, no origin");
	price_free(&t);
}

int
main(void)
{
	char cmd[64];

	if (!mkdtemp(tmp)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	test_dates();
	test_builtin();
	test_user_file();
	test_arithmetic();
	test_malformed();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		diag("could not remove %s", tmp);
	return done_testing();
}
