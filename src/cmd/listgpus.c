/*
 * gpuscope -L / --list-gpus: nvidia-smi -L's list, one line per GPU with
 * its UUID and each MIG device under its GPU, byte for byte as nvidia-smi
 * prints it; AMD and Intel GPUs follow, named by the ids -i takes.
 */
#include "cmd/cmd.h"

#include <getopt.h>
#include <stdio.h>

#include "backend/collect.h"
#include "core/config.h"
#include "core/err.h"
#include "core/gpu.h"
#include "core/strbuf.h"

static void
list_usage(FILE *f)
{
	fputs("usage: gpuscope -L [-i ID[,ID...]] [--timeout=SEC]\n"
	      "run 'gpuscope --help' for details\n",
	      f);
}

static const char *
name_of(const struct gpu_device *d)
{
	return d->name[0] ? d->name : "Unknown";
}

/* A whole NVIDIA GPU and, under it, its MIG devices, as nvidia-smi -L prints them. */
static void
list_nvidia(struct strbuf *out, const struct gpu_snapshot *s, size_t i)
{
	const struct gpu_device *g = &s->dev[i];

	strbuf_addf(out, "GPU %u: %s (UUID: %s)\n", g->index, name_of(g),
	            g->uuid[0] ? g->uuid : "N/A");
	for (size_t m = 0; m < s->nr_dev; m++) {
		const struct gpu_device *d = &s->dev[m];

		if (!d->is_mig || d->mig_parent != i)
			continue;
		/* nvidia-smi pads the profile to 11 columns and the device number to 2 */
		strbuf_addf(out, "  MIG %-11s Device %2u: (UUID: %s)\n",
		            d->mig_profile[0] ? d->mig_profile : "N/A", d->index,
		            d->uuid[0] ? d->uuid : "N/A");
	}
}

/* An AMD or Intel GPU: no UUID in NVIDIA's sense, so the ids -i takes. */
static void
list_other(struct strbuf *out, const struct gpu_snapshot *s, const struct gpu_device *d)
{
	char label[32];

	strbuf_addf(out, "GPU %s: %s (", gpu_device_label(s, d, label, sizeof(label)), name_of(d));
	if (d->uuid[0])
		strbuf_addf(out, "UUID: %s, ", d->uuid);
	strbuf_addf(out, "PCI: %s", d->pci_bus_id[0] ? d->pci_bus_id : "N/A");
	if (d->card[0])
		strbuf_addf(out, ", %s %s", d->driver[0] ? d->driver : "drm", d->card);
	strbuf_addstr(out, ")\n");
}

int
cmd_list_gpus(int argc, char **argv, struct gs_config *cfg)
{
	static const struct option opts[] = {
		{ "list-gpus", no_argument, NULL, 'L' },
		{ "id", required_argument, NULL, 'i' },
		{ "timeout", required_argument, NULL, CMD_OPT_TIMEOUT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct err err = ERR_INIT;
	const char *ids = NULL;
	struct collector *c = NULL;
	struct gpu_snapshot snap;
	struct strbuf out = STRBUF_INIT;
	int opt, rc;

	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":Li:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'L':
			break;
		case 'i':
			ids = optarg;
			break;
		default:
			rc = cmd_common_option(opt, argv, cfg, NULL, list_usage);
			if (rc != CMD_NEXT_OPTION)
				return rc;
		}
	}
	rc = cmd_no_operands(argc, argv, list_usage);
	if (rc != EXIT_OK)
		return rc;

	gpu_snapshot_init(&snap);
	if (cfg->replay) {
		rc = cmd_snapshot(cfg, ids, 0, &snap);
	} else {
		/* identity only: no second reading for rates, no processes */
		rc = cmd_open_collector(cfg, ids, &c);
		if (rc == EXIT_OK && collector_sample(c, &snap, 0, &err) < 0) {
			cmd_error("%s", err.msg);
			rc = EXIT_RUNTIME;
		}
	}
	if (rc != EXIT_OK)
		goto out;
	for (size_t i = 0; i < snap.nr_dev; i++)
		if (snap.dev[i].vendor == VENDOR_NVIDIA && !snap.dev[i].is_mig)
			list_nvidia(&out, &snap, i);
	for (size_t i = 0; i < snap.nr_dev; i++)
		if (snap.dev[i].vendor != VENDOR_NVIDIA)
			list_other(&out, &snap, &snap.dev[i]);
	rc = cmd_output(&out, &snap);
out:
	strbuf_release(&out);
	gpu_snapshot_release(&snap);
	collector_close(c);
	return rc;
}
