/*
 * The list of devices bench and burn take (bench/dev.h): growing it,
 * closing it, and naming its devices on the command line.
 */
#include "bench/dev.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/err.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

int
bench_devs_add(struct bench_devs *devs, struct bench_dev *d)
{
	struct bench_dev **grown = xrealloc(devs->dev, (devs->ndev + 1) * sizeof(*grown));

	if (d->timeout_s <= 0)
		d->timeout_s = 60;
	devs->dev = grown;
	devs->dev[devs->ndev++] = d;
	return 0;
}

void
bench_devs_close(struct bench_devs *devs)
{
	for (size_t i = devs->ndev; i-- > 0;)
		devs->dev[i]->ops->close(devs->dev[i]);
	free(devs->dev);
	devs->dev = NULL;
	devs->ndev = 0;
}

bool
bench_dev_matches(const struct bench_dev *d, size_t index, const char *id)
{
	char num[24];
	size_t len = strlen(id);

	snprintf(num, sizeof(num), "%zu", index);
	if (!strcmp(id, num) || !strcasecmp(id, d->info.id))
		return true;
	/* "GPU-" alone would name every NVIDIA GPU */
	if (d->info.uuid[0] && len >= 8 && !strncasecmp(d->info.uuid, id, len))
		return true;
	if (d->info.pci_bus_id[0] && strchr(id, ':')) {
		struct gpu_device g;
		bool prefix;

		memset(&g, 0, sizeof(g));
		str_copy(g.pci_bus_id, sizeof(g.pci_bus_id), d->info.pci_bus_id);
		g.pci_valid = true;
		return gpu_match_id(&g, id, &prefix);
	}
	return false;
}

int
bench_devs_select(const struct bench_devs *devs, const char *ids, bool *keep, struct err *err)
{
	char *list = xstrdup(ids), *save = NULL;
	int rc = 0;

	for (size_t i = 0; i < devs->ndev; i++)
		keep[i] = false;
	for (char *id = strtok_r(list, ",", &save); id && !rc; id = strtok_r(NULL, ",", &save)) {
		bool found = false;

		for (size_t i = 0; i < devs->ndev; i++)
			if (bench_dev_matches(devs->dev[i], i, id))
				found = keep[i] = true;
		if (!found)
			rc = err_set(err, E_USAGE, "'%s' names none of the %zu devices", id,
			             devs->ndev);
	}
	free(list);
	return rc;
}
