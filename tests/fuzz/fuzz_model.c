/*
 * libFuzzer target: what `gpuscope fit MODEL` reads from the user.
 *
 * Input: one flags byte, then the bytes. Bit 0 of the flags: the bytes are
 * a Hugging Face config.json, written to a temporary file and read by
 * model_from_config(); otherwise they are the MODEL argument (cut at the
 * first NUL or newline) given to model_resolve(), which takes a catalog
 * name, a size like "7b" or "8x7b", or a path.
 *
 * Checked: no crash or leak; a shape that is accepted has finite, positive
 * layers, hidden size and heads, a positive finite parameter count at least
 * as large as the active one, and a finite, non-negative KV-cache size per
 * token (NaN only where the shape leaves it unknown); a refusal has a
 * one-line message.
 */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "core/err.h"
#include "fit/models.h"
#include "fuzz.h"

static char path[4096];

int LLVMFuzzerInitialize(int *argc, char ***argv);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(path, sizeof(path), "%s/config.json", fuzz_scratch("model"));
	return 0;
}

static void
check_shape(const struct model_cfg *m)
{
	double p = model_params(m), a = model_active_params(m);
	double kv = model_kv_bytes_per_token(m, 2);

	FUZZ_CHECK(isfinite(m->layers) && m->layers > 0, "layers %g", m->layers);
	FUZZ_CHECK(isfinite(m->hidden) && m->hidden > 0, "hidden %g", m->hidden);
	FUZZ_CHECK(isfinite(m->heads) && m->heads > 0, "heads %g", m->heads);
	FUZZ_CHECK(isfinite(p) && p > 0, "params %g", p);
	FUZZ_CHECK(isnan(a) || (a > 0 && a <= p * (1 + 1e-9)), "active %g of %g", a, p);
	FUZZ_CHECK(isnan(kv) || (isfinite(kv) && kv >= 0), "kv %g", kv);
	FUZZ_CHECK(memchr(m->name, '\0', sizeof(m->name)) != NULL, "name not terminated");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct err err = ERR_INIT;
	struct model_cfg m;
	int rc;

	if (!size)
		return 0;
	if (data[0] & 1) {
		fuzz_write_file(path, data + 1, size - 1);
		rc = model_from_config(path, &m, &err);
	} else {
		char *s = fuzz_cstr(data + 1, size - 1);

		s[strcspn(s, "\n")] = '\0';
		rc = model_resolve(s, &m, &err);
		free(s);
	}
	if (rc == 0)
		check_shape(&m);
	else
		FUZZ_CHECK(err.msg[0] && !strchr(err.msg, '\n'), "refusal message: '%s'", err.msg);
	return 0;
}
