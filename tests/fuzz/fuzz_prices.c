/*
 * libFuzzer target: `gpuscope fit --rent --prices FILE`, the user's own
 * price table (src/fit/price.c, the TSV format of data/prices/README.md).
 *
 * Input: the file's bytes, given to price_parse().
 *
 * Checked: no crash or leak; an accepted table has at least one offer, each
 * with a spec row, a positive finite price, at least one GPU per instance,
 * one kind, and strings that are set; the cheapest offer for 1 and 8 GPUs of
 * each offer's row is one of the table's with a finite, positive price per
 * hour; the table's newest date is not older than its oldest; a refusal has
 * a one-line message.
 */
#include <math.h>
#include <string.h>

#include "core/err.h"
#include "fit/price.h"
#include "fuzz.h"

static void
check_table(const struct price_table *t)
{
	FUZZ_CHECK(t->nr > 0, "an accepted table with no offer");
	FUZZ_CHECK(t->newest >= t->oldest, "newest %ld before oldest %ld", t->newest, t->oldest);
	for (size_t i = 0; i < t->nr; i++) {
		const struct price_offer *o = &t->offer[i];

		FUZZ_CHECK(o->gpu != NULL, "offer %zu has no spec row", i);
		FUZZ_CHECK(isfinite(o->usd_per_gpu_hour) && o->usd_per_gpu_hour > 0,
		           "offer %zu price %g", i, o->usd_per_gpu_hour);
		FUZZ_CHECK(o->gpus >= 1, "offer %zu has %u GPUs", i, o->gpus);
		FUZZ_CHECK(o->kind == PRICE_ON_DEMAND || o->kind == PRICE_SPOT ||
		                   o->kind == PRICE_RESERVED,
		           "offer %zu kind %d", i, (int)o->kind);
		FUZZ_CHECK(o->provider && o->date_s && o->source && o->notes,
		           "offer %zu has a NULL string", i);
		for (double k = 1; k <= 8; k *= 8) {
			const struct price_offer *c = price_cheapest(t, o->gpu, k, PRICE_ANY);
			double ph = price_per_hour(c, k);

			FUZZ_CHECK(c >= t->offer && c < t->offer + t->nr,
			           "cheapest for offer %zu is not in the table", i);
			FUZZ_CHECK(isfinite(ph) && ph > 0, "price per hour %g for %g GPUs", ph, k);
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct err err = ERR_INIT;
	struct price_table t = { 0 };

	if (price_parse(&t, (const char *)data, size, "fuzz.tsv", &err) == 0)
		check_table(&t);
	else
		FUZZ_CHECK(err.msg[0] && !strchr(err.msg, '\n'), "refusal message: '%s'", err.msg);
	price_free(&t);
	return 0;
}
